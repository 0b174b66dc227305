// Misuse: a copy between Refs of different element types (copies do not convert).
// refx-expect: source and destination must have one element type (copies do not convert)
#include <refx/refx.hpp>

using namespace refx;

void fetch() {
  trace([](HbmRef<const double, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start();
      c.wait();
    });
  });
}
