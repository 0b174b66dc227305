// Misuse: reduce_sum along an axis the Value does not have.
// refx-expect: refx: reduce_sum axis is out of range for this value
#include <refx/refx.hpp>

using namespace refx;

void row_sums() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8> y) {
    y.store(reduce_sum<2>(x.load()));  // axes are 0 and 1
  });
}
