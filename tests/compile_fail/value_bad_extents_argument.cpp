// Misuse: the second template argument of Value is not refx::extents<...>.
// refx-expect: refx: the second argument of Value must be refx::extents<...>
#include <refx/refx.hpp>

using namespace refx;

struct Shape128 {};

void keep() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    Value<float, Shape128> v;
    (void)v;
    y.store(x.load());
  });
}
