// Misuse: a Ref added to a Value.
// refx-expect: refx: arithmetic and comparisons take Values, not Refs
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void twice() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) { y.store(x + x.load()); });
}
