// Misuse: select with a condition that is not a bool Value (a float mask).
// refx-expect: refx: select
// refx-expect: condition must be a bool Value (a comparison)
#include <refx/refx.hpp>

using namespace refx;

void masked() {
  trace([](VmemRef<const float, 128> mask, VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    y.store(select(mask.load(), x.load(), 0.0f));  // needs mask.load() != 0.0f
  });
}
