// Misuse: pltpu.touch ported onto a semaphore.
// refx-expect: refx: touch takes a Ref (a kernel parameter, a run_scoped buffer or a view of one), not a Value
#include <refx/refx.hpp>

using namespace refx;

void touch_a_semaphore() {
  trace([](VmemRef<float, 8> y) {
    run_scoped([&](DmaSemaphore sem) {
      touch(sem);
      y.store(0.0f);
    });
  });
}
