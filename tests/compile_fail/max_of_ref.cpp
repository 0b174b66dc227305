// Misuse: max of a Ref and a literal (jnp.maximum(x_ref[...], 0.0) ported
// without the read).
// refx-expect: refx: max takes Values, not Refs; read the Ref first: max(x.load(), y)
#include <refx/refx.hpp>

using namespace refx;

void relu() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y) { y.store(max(x, 0.0f)); });
}
