#pragma once
// One-byte floating-point storage types with the semantics of ml_dtypes (and
// so JAX and XLA):
//
//   f8e4m3fn  1 sign, 4 exponent (bias 7), 3 mantissa bits. No infinity:
//             the exponent field 1111 holds finite values up to 448, except
//             S.1111.111, the only NaN of each sign.
//   f8e5m2    1 sign, 5 exponent (bias 15), 2 mantissa bits. IEEE-like:
//             +-inf at S.11111.00, NaNs above it; max 57344.
//
// Like bf16 and f16 they are storage: arithmetic happens in f32 and a result
// is rounded when it is stored back. Conversions are those of ml_dtypes'
// default (non-saturating) conversion:
//
//   - float -> f8: round to nearest, ties to even, subnormals included.
//     A value that rounds beyond the largest finite one overflows: to +-inf
//     in f8e5m2, to NaN (of the value's sign) in f8e4m3fn, which has no
//     infinity (so 464 -> 448, the tie going to the even 448, but any
//     f32 above 464 -> NaN). +-inf becomes +-inf in f8e5m2 and +-NaN in
//     f8e4m3fn. A NaN becomes the type's quiet NaN with the NaN's sign
//     (f8e4m3fn S.1111.111, f8e5m2 S.11111.10): the payload is not kept.
//     Below half the smallest subnormal a value rounds to (signed) zero.
//   - double -> f8: rounded once (through an f32 rounded to odd).
//   - f8 -> float: exact; a NaN becomes f32's quiet NaN with its sign.
//   - f16 <-> f8e5m2: f8e5m2 is f16's upper byte, and ml_dtypes converts
//     between them on the bits, keeping a NaN's upper payload bits (f16 ->
//     f8e5m2 sets the quiet bit). refx does the same (detail/convert.hpp).

#include <array>
#include <bit>
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include <refx/core/float16.hpp>

namespace refx {

namespace detail {

/// The layout of a one-byte float: `ExponentBits` + `MantissaBits` = 7, and
/// whether it is "finite" (fn: no infinity, NaN only at S.1..1.1..1).
template <int ExponentBits, int MantissaBits, bool Finite>
struct float8_format {
  static constexpr int exponent_bits = ExponentBits;
  static constexpr int mantissa_bits = MantissaBits;
  static constexpr bool finite = Finite;
  static constexpr int bias = (1 << (ExponentBits - 1)) - 1;
  static constexpr std::uint8_t exponent_field = (1u << ExponentBits) - 1u;
  /// Bit patterns (positive; the sign is bit 7).
  static constexpr std::uint8_t max_finite =
      Finite ? 0x7e : static_cast<std::uint8_t>(((exponent_field - 1u) << MantissaBits) | ((1u << MantissaBits) - 1u));
  static constexpr std::uint8_t infinity = Finite ? 0x7f : static_cast<std::uint8_t>(exponent_field << MantissaBits);
  static constexpr std::uint8_t quiet_nan =
      Finite ? 0x7f : static_cast<std::uint8_t>(infinity | (1u << (MantissaBits - 1)));
  /// What a value beyond max_finite becomes: infinity, or NaN when there is none.
  static constexpr std::uint8_t overflow = Finite ? quiet_nan : infinity;

  static constexpr bool is_nan(std::uint8_t b) noexcept {
    return Finite ? (b & 0x7fu) == 0x7fu : (b & 0x7fu) > infinity;
  }

  static std::uint8_t encode(float f) noexcept {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    const auto sign = static_cast<std::uint8_t>((u >> 24) & 0x80u);
    const std::uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | quiet_nan;
    if (a == 0x7f800000u) return sign | overflow;
    constexpr std::uint32_t drop = 23 - MantissaBits;  // f32 mantissa bits rounded away
    constexpr std::uint32_t min_normal = static_cast<std::uint32_t>(127 + 1 - bias) << 23;  // 2^(1 - bias)
    if (a < min_normal) {
      // A subnormal or zero: adding 2^k, whose f32 ulp 2^(k-23) is the f8
      // subnormal spacing 2^(1 - bias - MantissaBits), lets the hardware round
      // (to nearest even); the sum's low bits count the spacings (2^M of them
      // is the smallest normal, which the bits encode as well).
      constexpr std::uint32_t k_bits = static_cast<std::uint32_t>(127 + 1 - bias - MantissaBits + 23) << 23;
      const float v = std::bit_cast<float>(a) + std::bit_cast<float>(k_bits);
      return static_cast<std::uint8_t>(sign | (std::bit_cast<std::uint32_t>(v) - k_bits));
    }
    // Normal: rebias the exponent and round the dropped bits to nearest even.
    std::uint32_t x = a - (static_cast<std::uint32_t>(127 - bias) << 23);
    x += ((1u << (drop - 1)) - 1u) + ((x >> drop) & 1u);
    x >>= drop;
    if (x > max_finite) return sign | overflow;
    return static_cast<std::uint8_t>(sign | x);
  }

  /// The value of code `b` (f32's quiet NaN, signed, for a NaN); float8
  /// reads it from float8_values, this function's table.
  static constexpr float value_of(std::uint8_t b) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
    if (is_nan(b)) return std::bit_cast<float>(sign | 0x7fc00000u);
    const std::uint32_t e = (b >> MantissaBits) & exponent_field, m = b & ((1u << MantissaBits) - 1u);
    if (!Finite && e == exponent_field) return std::bit_cast<float>(sign | 0x7f800000u);
    if (e == 0) {
      const float v = static_cast<float>(m) * std::bit_cast<float>(k_subnormal_spacing);  // exact
      return sign != 0 ? -v : v;
    }
    return std::bit_cast<float>(sign | ((e + 127u - bias) << 23) | (m << (23 - MantissaBits)));
  }

 private:
  static constexpr std::uint32_t k_subnormal_spacing = static_cast<std::uint32_t>(127 + 1 - bias - MantissaBits) << 23;
};

// Named (not aliases), so that compiler messages read float8<f8e4m3fn_format>.
struct f8e4m3fn_format : float8_format<4, 3, true> {};
struct f8e5m2_format : float8_format<5, 2, false> {};

/// Every code's f32 value, computed at compile time: decoding is one load.
template <class Format>
inline constexpr std::array<float, 256> float8_values = [] {
  std::array<float, 256> t{};
  for (unsigned b = 0; b < 256; ++b) t[b] = Format::value_of(static_cast<std::uint8_t>(b));
  return t;
}();

/// f16 -> f8e5m2 on the bits, as ml_dtypes does: round the low byte away (to
/// nearest even; overflow carries into infinity), or keep a NaN's upper byte
/// with the quiet bit set.
inline std::uint8_t f8e5m2_bits_of_f16(std::uint16_t h) noexcept {
  if ((h & 0x7fffu) > 0x7c00u) return static_cast<std::uint8_t>((h >> 8) | 0x02u);
  if ((h & 0x7fffu) == 0x7c00u) return static_cast<std::uint8_t>(h >> 8);
  return static_cast<std::uint8_t>((h + 0x7fu + ((h >> 8) & 1u)) >> 8);
}

/// An 8-bit float in `Format`: the surface of half_float, on one byte.
template <class Format>
class float8 {
 public:
  using format = Format;
  constexpr float8() noexcept = default;
  explicit float8(float f) noexcept : bits_(Format::encode(f)) {}
  explicit float8(double d) noexcept : bits_(Format::encode(round_to_odd_f32(d))) {}
  /// From an integer, through f32 (exact wherever the result is finite).
  template <class I>
    requires std::is_integral_v<I>
  explicit float8(I i) noexcept : float8(static_cast<float>(i)) {}
  /// From bf16 or f16 (rounded once: they widen to f32 exactly).
  template <class H>
    requires is_half_float_v<H>
  explicit float8(H h) noexcept : bits_(from_half(h)) {}
  /// From the other one-byte float (exact through f32, then rounded once).
  template <class Other>
    requires(!std::is_same_v<Other, Format>)
  explicit float8(float8<Other> o) noexcept : float8(static_cast<float>(o)) {}

  static constexpr float8 from_bits(std::uint8_t b) noexcept {
    float8 h;
    h.bits_ = b;
    return h;
  }
  constexpr std::uint8_t bits() const noexcept { return bits_; }
  operator float() const noexcept { return float8_values<Format>[bits_]; }  // NOLINT: exact, so implicit

  friend float8 operator+(float8 a, float8 b) noexcept { return float8(float(a) + float(b)); }
  friend float8 operator-(float8 a, float8 b) noexcept { return float8(float(a) - float(b)); }
  friend float8 operator*(float8 a, float8 b) noexcept { return float8(float(a) * float(b)); }
  friend float8 operator/(float8 a, float8 b) noexcept { return float8(float(a) / float(b)); }
  friend float8 operator-(float8 a) noexcept { return from_bits(static_cast<std::uint8_t>(a.bits_ ^ 0x80u)); }
  float8& operator+=(float8 b) noexcept { return *this = *this + b; }
  friend bool operator==(float8 a, float8 b) noexcept { return float(a) == float(b); }
  friend auto operator<=>(float8 a, float8 b) noexcept { return float(a) <=> float(b); }

 private:
  template <class H>
  static std::uint8_t from_half(H h) noexcept {
    if constexpr (std::is_same_v<Format, f8e5m2_format> && std::is_same_v<H, f16>) return f8e5m2_bits_of_f16(h.bits());
    else return Format::encode(static_cast<float>(h));
  }

  std::uint8_t bits_ = 0;
};
}  // namespace detail

/// float8_e4m3fn: 1 sign, 4 exponent and 3 mantissa bits, finite (max 448), one NaN per sign.
using f8e4m3fn = detail::float8<detail::f8e4m3fn_format>;
/// float8_e5m2: 1 sign, 5 exponent and 2 mantissa bits, IEEE-like (max 57344, inf, NaNs).
using f8e5m2 = detail::float8<detail::f8e5m2_format>;

/// True for f8e4m3fn and f8e5m2: stored in 1 byte, computed in f32.
template <class T>
inline constexpr bool is_float8_v =
    std::is_same_v<std::remove_cv_t<T>, f8e4m3fn> || std::is_same_v<std::remove_cv_t<T>, f8e5m2>;
/// True for the floating types stored narrower than f32 and computed in f32:
/// bf16, f16, f8e4m3fn, f8e5m2.
template <class T>
inline constexpr bool is_narrow_float_v = is_half_float_v<T> || is_float8_v<T>;

}  // namespace refx

namespace std {
/// As ml_dtypes defines them: f8e4m3fn has no infinity, and its infinity()
/// is its NaN (what an infinite f32 converts to).
template <class Format>
class numeric_limits<refx::detail::float8<Format>> {
  using H = refx::detail::float8<Format>;
  static constexpr H bits(std::uint8_t b) noexcept { return H::from_bits(b); }
  static constexpr int m = Format::mantissa_bits;
  static constexpr int bias = Format::bias;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool is_iec559 = !Format::finite;
  static constexpr bool has_infinity = !Format::finite;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = !Format::finite;
  static constexpr int digits = m + 1;
  static constexpr int radix = 2;
  static constexpr int min_exponent = 2 - bias;
  static constexpr int max_exponent =
      Format::finite ? Format::exponent_field - bias + 1 : Format::exponent_field - bias;
  static constexpr H min() noexcept { return bits(static_cast<std::uint8_t>(1u << m)); }  // smallest normal
  static constexpr H max() noexcept { return bits(Format::max_finite); }
  static constexpr H lowest() noexcept { return bits(static_cast<std::uint8_t>(Format::max_finite | 0x80u)); }
  static constexpr H epsilon() noexcept { return bits(static_cast<std::uint8_t>((bias - m) << m)); }
  static constexpr H denorm_min() noexcept { return bits(0x01); }
  static constexpr H infinity() noexcept { return bits(Format::infinity); }
  static constexpr H quiet_NaN() noexcept { return bits(Format::quiet_nan); }
  static constexpr H signaling_NaN() noexcept {
    return bits(Format::finite ? Format::quiet_nan : static_cast<std::uint8_t>(Format::infinity | 1u));
  }
};
}  // namespace std

/// Formats as the f32 value (with f32's format specifiers), in any context.
template <class Format>
struct fmt::formatter<refx::detail::float8<Format>> : fmt::formatter<float> {
  template <class FormatContext>
  auto format(refx::detail::float8<Format> h, FormatContext& ctx) const {
    return fmt::formatter<float>::format(static_cast<float>(h), ctx);
  }
};
