// Misuse: reduce_sum of a Ref.
// refx-expect: refx: reduce_sum takes a Value, not a Ref
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void total() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 128> y) { y.store(reduce_sum<0>(x)); });
}
