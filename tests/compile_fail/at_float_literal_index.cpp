// Misuse: a floating-point literal as a Ref index (it would pick row 1).
// refx-expect: refx: .at(...) takes integers, integer Scalars, ds(start, size[, stride]), ds<N>(start) or refx::all
#include <refx/refx.hpp>

using namespace refx;

void row() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 128> y) { y.store(x.at(1.5).load()); });
}
