// Misuse: start(true) where the accumulate tag is needed.
// refx-expect: refx: a copy's start() takes nothing, or the tag refx::accumulate
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void fetch() {
  trace([](HbmRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start(true);
      c.wait();
    });
  });
}
