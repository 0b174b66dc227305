// Misuse: start(accumulate) on bool Refs (bools do not add).
// refx-expect: refx: start(accumulate) adds into the destination, but bool elements cannot be added or maximised
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void merge() {
  trace([](HbmRef<const bool, 128> x, VmemRef<bool, 128> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start(accumulate);
      c.wait();
    });
  });
}
