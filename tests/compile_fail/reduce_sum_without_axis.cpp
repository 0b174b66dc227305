// Misuse: jnp.sum(x) ported without an axis: refx reduces one named axis.
// refx-expect: refx: reduce_sum needs the axis to reduce: reduce_sum<Axis>(v)
#include <refx/refx.hpp>

using namespace refx;

void total() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 128> y) { y.store(reduce_sum(x.load())); });
}
