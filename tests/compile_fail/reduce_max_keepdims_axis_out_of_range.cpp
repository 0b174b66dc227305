// Misuse: a row maximum with keepdims over axis 2 of a rank-2 block (Pallas'
// jnp.max(s, axis=-1, keepdims=True) is reduce_max<-1> or reduce_max<1>).
// refx-expect: refx: reduce_max axis is out of range for this value's rank
#include <refx/refx.hpp>

using namespace refx;

void row_max() {
  trace([](VmemRef<const float, 128, 256> s, VmemRef<float, 128, 1> m) { m.store(reduce_max<2>(s.load(), keepdims)); });
}
