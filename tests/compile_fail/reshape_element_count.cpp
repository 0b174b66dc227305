// Misuse: reshaping a Value to extents with another element count.
// refx-expect: refx: reshape must keep the element count; the target extents hold a different number of elements than the Value
#include <refx/refx.hpp>

using namespace refx;

void flatten() {
  trace([](VmemRef<const float, 8, 16> x, VmemRef<float, 100> y) { y.store(reshape<100>(x.load())); });
}
