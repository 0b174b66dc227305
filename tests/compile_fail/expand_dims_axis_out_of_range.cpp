// Misuse: l[:, :, None] on a rank-1 row sum: expand_dims of a rank-1 Value
// takes axes 0, 1, -1 and -2.
// refx-expect: refx: expand_dims axis is out of range
#include <refx/refx.hpp>

using namespace refx;

void normalise() {
  trace([](VmemRef<const float, 128, 256> p, VmemRef<float, 128, 256> o) {
    const auto v = p.load();
    const auto l = reduce_sum<1>(v);
    o.store(v / expand_dims<2>(l));
  });
}
