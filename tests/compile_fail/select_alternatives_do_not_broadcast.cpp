// Misuse: a causal mask's fill value given per key block column (<1, 128>)
// against scores of 256 columns: select's operands must broadcast to one shape.
// refx-expect: refx: select's condition and alternatives do not broadcast to one shape
#include <refx/refx.hpp>

using namespace refx;

void mask() {
  trace([](VmemRef<const float, 128, 256> s, VmemRef<const float, 1, 128> fill, VmemRef<float, 128, 256> out) {
    const auto v = s.load();
    out.store(select(v > 0.0f, v, fill.load()));
  });
}
