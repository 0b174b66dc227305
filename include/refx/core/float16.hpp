#pragma once
// Two-byte floating-point storage types: bf16 (bfloat16: f32's 8-bit
// exponent, 7 stored mantissa bits) and f16 (IEEE 754 binary16: 5-bit
// exponent, 10 mantissa bits). g++ 12 has no std::bfloat16_t, so refx has
// its own. They are storage: arithmetic happens in f32, as XLA does on CPU,
// and a result is rounded to nearest (ties to even) when it is stored back.
//
//   - float -> 2-byte: round to nearest even; overflow becomes infinity,
//     values below the smallest subnormal round to (signed) zero, a NaN
//     stays a quiet NaN with its sign.
//   - double -> 2-byte: rounded once (through an f32 rounded to odd, which
//     has enough extra bits that the second rounding is exact), so a double
//     on a tie of the 2-byte grid rounds the same as it would directly.
//   - 2-byte -> float: exact.
// Arithmetic operators on two values of one type compute in f32 and round
// the result, so host code (references in tests) reads like kernel code.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

namespace refx {

namespace detail {
/// `d` as an f32 rounded to odd: truncated toward zero, with the last bit
/// set when the truncation lost anything. A later round to nearest of this
/// f32 to fewer than 22 mantissa bits equals rounding `d` directly.
inline float round_to_odd_f32(double d) noexcept {
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d) {
    auto u = std::bit_cast<std::uint32_t>(f);
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) --u;  // rounded away from zero: step back
    f = std::bit_cast<float>(u | 1u);
  }
  return f;
}

inline std::uint16_t bf16_bits(float f) noexcept {
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<std::uint16_t>(u >> 16);
}

inline std::uint16_t f16_bits(float f) noexcept {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));  // quiet NaN
  if (x >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: infinity (or was)
  if (x < 0x38800000u) {
    // Below 2^-14: a subnormal or zero. Adding 0.5 puts the value's f16 ulp
    // (2^-24) at f32's ulp of 0.5, so the hardware's rounding is the one we want.
    const float v = std::bit_cast<float>(x) + 0.5f;
    return static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(v) - 0x3f000000u));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits.
  x += (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu + ((x >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (x >> 13));
}

inline float f16_value(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    const float v = static_cast<float>(mantissa) * 0x1p-24f;  // exact: subnormal or zero
    return sign != 0 ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// The shared surface of bf16 and f16; `Format` converts bits to and from f32.
template <class Format>
class half_float {
 public:
  constexpr half_float() noexcept = default;
  explicit half_float(float f) noexcept : bits_(Format::encode(f)) {}
  explicit half_float(double d) noexcept : bits_(Format::encode(round_to_odd_f32(d))) {}
  /// From an integer: exact below 2^24 (through f32), rounded once beyond.
  template <class I>
    requires std::is_integral_v<I>
  explicit half_float(I i) noexcept : half_float(static_cast<double>(i)) {}

  static constexpr half_float from_bits(std::uint16_t b) noexcept {
    half_float h;
    h.bits_ = b;
    return h;
  }
  constexpr std::uint16_t bits() const noexcept { return bits_; }
  operator float() const noexcept { return Format::decode(bits_); }  // NOLINT: exact, so implicit

  friend half_float operator+(half_float a, half_float b) noexcept { return half_float(float(a) + float(b)); }
  friend half_float operator-(half_float a, half_float b) noexcept { return half_float(float(a) - float(b)); }
  friend half_float operator*(half_float a, half_float b) noexcept { return half_float(float(a) * float(b)); }
  friend half_float operator/(half_float a, half_float b) noexcept { return half_float(float(a) / float(b)); }
  friend half_float operator-(half_float a) noexcept {
    return from_bits(static_cast<std::uint16_t>(a.bits_ ^ 0x8000u));
  }
  half_float& operator+=(half_float b) noexcept { return *this = *this + b; }
  friend bool operator==(half_float a, half_float b) noexcept { return float(a) == float(b); }
  friend auto operator<=>(half_float a, half_float b) noexcept { return float(a) <=> float(b); }

 private:
  std::uint16_t bits_ = 0;
};

struct bf16_format {
  static std::uint16_t encode(float f) noexcept { return bf16_bits(f); }
  static float decode(std::uint16_t b) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }
};
struct f16_format {
  static std::uint16_t encode(float f) noexcept { return f16_bits(f); }
  static float decode(std::uint16_t b) noexcept { return f16_value(b); }
};
}  // namespace detail

/// bfloat16: 1 sign, 8 exponent and 7 mantissa bits (f32's range, 3 decimal digits).
using bf16 = detail::half_float<detail::bf16_format>;
/// IEEE 754 binary16: 1 sign, 5 exponent and 10 mantissa bits (max 65504).
using f16 = detail::half_float<detail::f16_format>;

/// True for bf16 and f16: stored in 2 bytes, computed in f32.
template <class T>
inline constexpr bool is_half_float_v =
    std::is_same_v<std::remove_cv_t<T>, bf16> || std::is_same_v<std::remove_cv_t<T>, f16>;

}  // namespace refx

namespace std {
template <class Format>
class numeric_limits<refx::detail::half_float<Format>> {
  using H = refx::detail::half_float<Format>;
  static constexpr bool is_bf16 = std::is_same_v<Format, refx::detail::bf16_format>;
  static H bits(std::uint16_t b) noexcept { return H::from_bits(b); }

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr int digits = is_bf16 ? 8 : 11;
  static constexpr int radix = 2;
  static constexpr int min_exponent = is_bf16 ? -125 : -13;
  static constexpr int max_exponent = is_bf16 ? 128 : 16;
  static H min() noexcept { return bits(is_bf16 ? 0x0080 : 0x0400); }  // smallest normal
  static H max() noexcept { return bits(is_bf16 ? 0x7f7f : 0x7bff); }  // largest finite
  static H lowest() noexcept { return bits(is_bf16 ? 0xff7f : 0xfbff); }
  static H epsilon() noexcept { return bits(is_bf16 ? 0x3c00 : 0x1400); }  // 2^-7, 2^-10
  static H denorm_min() noexcept { return bits(0x0001); }
  static H infinity() noexcept { return bits(is_bf16 ? 0x7f80 : 0x7c00); }
  static H quiet_NaN() noexcept { return bits(is_bf16 ? 0x7fc0 : 0x7e00); }
  static H signaling_NaN() noexcept { return bits(is_bf16 ? 0x7fa0 : 0x7d00); }
};
}  // namespace std

/// Formats as the f32 value (with f32's format specifiers). Any context, not
/// only format_context: a block of halves in debug_print is formatted element
/// by element through this formatter in fmt's compile-time format check too.
template <class Format>
struct fmt::formatter<refx::detail::half_float<Format>> : fmt::formatter<float> {
  template <class FormatContext>
  auto format(refx::detail::half_float<Format> h, FormatContext& ctx) const {
    return fmt::formatter<float>::format(static_cast<float>(h), ctx);
  }
};
