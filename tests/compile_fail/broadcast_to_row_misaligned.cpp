// Misuse: m[:, None] written as broadcast_to<128, 256>(m) with a row maximum
// m of extents <128>: broadcast_to aligns m with the result's last
// dimension (256), as jnp.broadcast_to does; expand_dims<1>(m) first.
// refx-expect: refx: broadcast_to cannot stretch this Value to these extents
#include <refx/refx.hpp>

using namespace refx;

void subtract_row_max() {
  trace([](VmemRef<const float, 128, 256> s, VmemRef<float, 128, 256> p) {
    const auto v = s.load();
    const auto m = reduce_max<1>(v);
    p.store(exp(v - broadcast_to<128, 256>(m)));
  });
}
