// Misuse: reduce_max along an axis the Value does not have.
// refx-expect: refx: reduce_max axis is out of range for this value
#include <refx/refx.hpp>

using namespace refx;

void row_max() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8> y) {
    y.store(reduce_max<3>(x.load()));
  });
}
