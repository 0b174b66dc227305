// Misuse: erf on an integer Value (cast it to a floating-point type first).
// refx-expect: refx: erf needs a floating-point value; cast it first
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void gelu() {
  trace([](VmemRef<const std::int32_t, 128> x, VmemRef<float, 128> y) { y.store(cast<float>(erf(x.load()))); });
}
