// Misuse: refx::accum into a Value (Values are immutable; accumulate into a Ref).
// refx-expect: refx: expected a Ref here but got something else (a Value is immutable
#include <refx/refx.hpp>

using namespace refx;

void add_bias() {
  trace([](VmemRef<const float, 128> x, VmemRef<const float, 128> b, VmemRef<float, 128> y) {
    auto v = load(x);
    accum(v, load(b));
    store(y, v);
  });
}
