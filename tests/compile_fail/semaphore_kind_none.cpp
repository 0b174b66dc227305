// Misuse: a semaphore of kind none (pick regular, dma or barrier).
// refx-expect: refx: pick a semaphore kind: regular, dma or barrier
#include <refx/refx.hpp>

using namespace refx;

void handshake() {
  trace([](VmemRef<float, 128> y) {
    run_scoped([&](Semaphore<SemaphoreKind::none> s) {
      (void)s;
      y.store(0.0f);
    });
  });
}
