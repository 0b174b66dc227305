// Positive control: & | ^ ~ and the shifts on integer Values are bitwise
// (they were logical-only once), and shift amounts may be integer literals.
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void low_bits() {
  trace([](VmemRef<const std::int32_t, 128> x, VmemRef<std::int32_t, 128> y, VmemRef<const std::uint8_t, 128> b,
           VmemRef<std::uint8_t, 128> z) {
    y.store(shift_right_arithmetic((x.load() & 0xff) | ~x.load(), 3) ^ shift_left(x.load(), x.load()));
    z.store(shift_right_logical(b.load(), std::uint8_t{4}) ^ b.load());
  });
}
