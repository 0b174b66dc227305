// Misuse: a floating-point slice size.
// refx-expect: refx: ds(start, size[, stride]) takes integers
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void head() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 64> y) { y.store(x.at(ds(0, 64.5)).load()); });
}
