// Misuse: a u32 Scalar from a std::int16_t variable (a negative value would
// wrap around).
// refx-expect: refx: a signed integer where an unsigned element type (u8, u32) is expected may be negative
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void mask(std::int16_t m) {
  trace([&](VmemRef<std::uint32_t, 64> y) {
    Scalar<std::uint32_t> s = m;
    y.store(y.load() & s);
  });
}
