// Misuse: make_async_copy(src, sem, dst): semaphore and destination swapped.
// refx-expect: refx: a copy's destination is a semaphore here; the arguments are (src, dst, sem)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void fetch() {
  trace([](HbmRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, sem, y);
      c.start();
      c.wait();
    });
  });
}
