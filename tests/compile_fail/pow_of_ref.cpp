// Misuse: pow of a Ref (x_ref[...] ** 2 ported without the read).
// refx-expect: refx: pow takes Values, not Refs; read the Ref first: pow(x.load(), y)
#include <refx/refx.hpp>

using namespace refx;

void square() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y) { y.store(pow(x, 2.0f)); });
}
