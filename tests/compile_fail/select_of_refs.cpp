// Misuse: select with Refs as the alternatives.
// refx-expect: refx: select takes Values (a bool condition and two alternatives), not Refs
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void relu() {
  trace([](VmemRef<const float, 128> x, VmemRef<const float, 128> z, VmemRef<float, 128> y) {
    y.store(select(x.load() > 0.0f, x, z));
  });
}
