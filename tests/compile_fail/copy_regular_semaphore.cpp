// Misuse: completing a copy on a REGULAR semaphore (copies need DMA semaphores).
// refx-expect: refx: copies need a DMA semaphore; a REGULAR semaphore is signalled with semaphore_signal
#include <refx/refx.hpp>

using namespace refx;

void fetch() {
  trace([](HbmRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](RegularSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start();
      c.wait();
    });
  });
}
