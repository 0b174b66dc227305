// Misuse: semaphore_wait on a DMA semaphore (wait through the copy descriptor).
// refx-expect: refx: semaphore_wait takes a REGULAR or BARRIER semaphore; wait on a DMA semaphore through its copy descriptor
#include <refx/refx.hpp>

using namespace refx;

void stage() {
  trace([](HbmRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore sem) {
      make_async_copy(x, y, sem).start();
      semaphore_wait(sem);  // should be: the copy's wait()
    });
  });
}
