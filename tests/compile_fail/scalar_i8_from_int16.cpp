// Misuse: an i8 Scalar from a std::int16_t variable (narrowed to 8 bits).
// refx-expect: refx: an integer wider than the Scalar's 8-bit element type (i8 or u8) would be narrowed
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void bias(std::int16_t b) {
  trace([&](VmemRef<std::int8_t, 64> y) {
    Scalar<std::int8_t> s = b;
    y.store(y.load() + s);
  });
}
