// Misuse: broadcast_to of a Ref (jnp.broadcast_to(b_ref[...], (8, 128))
// ported without the read).
// refx-expect: refx: broadcast_to takes a Value, not a Ref; read the Ref first: broadcast_to<Dims...>(x.load())
#include <refx/refx.hpp>

using namespace refx;

void add_bias() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<const float, 1, 128> b, VmemRef<float, 8, 128> y) {
    y.store(x.load() + broadcast_to<8, 128>(b));
  });
}
