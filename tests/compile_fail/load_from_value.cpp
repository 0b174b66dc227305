// Misuse: refx::load on a Value (a Value is already data; only Refs are loaded).
// refx-expect: refx: expected a Ref here but got something else (a Value is immutable
#include <refx/refx.hpp>

using namespace refx;

void twice() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    auto v = load(x);
    auto w = load(v);
    store(y, w * 2.0f);
  });
}
