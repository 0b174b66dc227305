// Misuse: a Value of a const element type (Values are immutable already).
// refx-expect: refx: a Value is immutable already; write Value<T>, not Value<const T>
#include <refx/refx.hpp>

using namespace refx;

void keep() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    Value<const float, extents<128>> v;
    (void)v;
    y.store(x.load());
  });
}
