// Misuse: rsqrt on an integer Value (cast it to a floating-point type first).
// refx-expect: refx: rsqrt needs a floating-point value; cast it first
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void normalise() {
  trace([](VmemRef<const std::int32_t, 128> x, VmemRef<float, 128> y) { y.store(cast<float>(rsqrt(x.load()))); });
}
