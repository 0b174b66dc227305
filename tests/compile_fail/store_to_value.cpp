// Misuse: refx::store into a Value (Values are immutable; store into a Ref).
// refx-expect: refx: expected a Ref here but got something else (a Value is immutable
// refx-expect: store it into a Ref first)
#include <refx/refx.hpp>

using namespace refx;

void twice() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    auto v = load(x);
    store(v, v * 2.0f);
    store(y, v);
  });
}
