// Misuse: reading the raw bits of bf16 activations as `pltpu.bitcast(x,
// jnp.uint16)` would; refx has no 16-bit integer element type.
// refx-expect: refx: bitcast<U>'s element type must be one of bool, i8, u8, i32, u32, i64, f8e4m3fn, f8e5m2, bf16, f16,
// f32, f64 (std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t, refx::f8e4m3fn, refx::f8e5m2,
// refx::bf16, refx::f16, float, double); there are no 16-bit integers: view 16-bit data as refx::bf16 or refx::f16, or
// as std::uint32_t (two 16-bit halves each)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void sign_bits() {
  trace([](VmemRef<const bf16, 16, 256> act, VmemRef<std::uint32_t, 16, 256> sign) {
    const auto bits = act.bitcast<std::uint16_t>().load();
    sign.store(shift_right_logical(cast<std::uint32_t>(bits), 15));
  });
}
