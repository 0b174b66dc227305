// Misuse: semaphore_signal on a DMA semaphore (DMA semaphores are advanced by copies).
// refx-expect: refx: semaphore_signal takes a REGULAR or BARRIER semaphore; a DMA semaphore is advanced by copies
#include <refx/refx.hpp>

using namespace refx;

void notify() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore done) {
      y.store(x.load());
      semaphore_signal(done);
    });
  });
}
