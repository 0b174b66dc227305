// Misuse: a floating-point device id for semaphore_signal.
// refx-expect: refx: a device id is a 32-bit integer
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void notify() {
  trace([](VmemRef<float, 128> y) {
    run_scoped([&](RegularSemaphore sem) {
      semaphore_signal(sem, 1, 1.0f);
      semaphore_wait(sem);
    });
  });
}
