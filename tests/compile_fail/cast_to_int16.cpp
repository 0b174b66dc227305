// Misuse: a quantisation kernel ported from `(x * scale).astype(jnp.int16)`;
// refx has no 16-bit integer element type.
// refx-expect: refx: cast<U>'s element type must be one of bool, i8, u8, i32, u32, i64, f8e4m3fn, f8e5m2, bf16, f16,
// f32, f64 (std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t, refx::f8e4m3fn, refx::f8e5m2,
// refx::bf16, refx::f16, float, double); there are no 16-bit integers: cast to std::int32_t and store into a
// std::int32_t Ref
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void quantise() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<std::int32_t, 8, 128> q) {
    const auto scaled = x.load() * 127.0f;
    q.store(cast<std::int32_t>(cast<std::int16_t>(scaled)));
  });
}
