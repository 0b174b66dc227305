// Misuse: a Value as a copy's destination.
// refx-expect: refx: a copy's source and destination must be Refs (a Value is immutable; store it into a Ref first)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void fetch() {
  trace([](HbmRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y.load(), sem);
      c.start();
      c.wait();
    });
  });
}
