// Misuse: waiting through the copy for a copy that completes on a REGULAR
// semaphore (it rises by 1, not by bytes; Pallas raises "dma_wait requires
// a DMA semaphore").
// refx-expect: refx: this copy completes on a REGULAR semaphore, which rises by 1 when the copy lands: wait for it with semaphore_wait(sem)
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
