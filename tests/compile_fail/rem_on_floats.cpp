// Misuse: % on floating-point Values.
// refx-expect: refx: % needs integer operands
#include <refx/refx.hpp>

using namespace refx;

void wrap_phase() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    y.store(x.load() % 6.25f);
  });
}
