// Misuse: per-lane shift amounts computed in f32 (floor of a log2) and used
// directly as a shift amount, as jnp's left_shift would after an implicit
// promotion; the amount must be an integer Value.
// refx-expect: refx: a shift amount must be an integer; write an integer literal (or an integer Value)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void scale_by_powers_of_two() {
  trace([](VmemRef<const std::int32_t, 8, 128> mant, VmemRef<const float, 8, 128> mag,
           VmemRef<std::int32_t, 8, 128> out) {
    const auto amount = log(mag.load()) * 1.4426950f;
    out.store(shift_left(mant.load(), amount));
  });
}
