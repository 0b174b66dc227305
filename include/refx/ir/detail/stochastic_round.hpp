#pragma once
// Stochastic rounding of f32 elements to a narrower floating-point type with
// 32 random bits per element: the stochastic_round primitive
// (ir/primitives/random.hpp). A value between two neighbours lo < |x| < hi
// of the target type rounds to hi with probability (|x| - lo) / (hi - lo),
// so the expected result is x. One rule for every target, read from the
// type's std::numeric_limits (digits, min_exponent) and its conversion from
// float; bf16 also has the usual bit form of it (add 16 random bits below
// bf16's mantissa, truncate), which gives the same results and is faster.
// A new target (fp8) needs those limits, a conversion from float, and a
// case in stochastic_round_target().

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <refx/core/dtype.hpp>
#include <refx/core/float16.hpp>

namespace refx::detail {

/// The element types stochastic_round rounds to.
constexpr bool stochastic_round_target(DType t) noexcept { return t == DType::bf16 || t == DType::f16; }

/// `x` rounded to T, up (away from zero) with probability equal to the
/// fraction of the distance between its neighbours in T, decided by
/// `random`: with frac that fraction, the result is the upper neighbour when
/// floor(frac * 2^32) + random carries out of 32 bits. T's spacing at |x| is
/// 2^(max(e, emin) - (digits - 1)), e = floor(log2 |x|) and emin T's
/// smallest normal exponent: subnormals round on their own grid. Zeros,
/// infinities, NaN and values that T holds exactly convert as a cast does;
/// a value beyond T's largest finite one rounds to it or to the next step
/// above it (infinity for bf16 and f16).
template <class T>
T stochastic_round_to(float x, std::uint32_t random) noexcept {
  using L = std::numeric_limits<T>;
  if (!std::isfinite(x) || x == 0.0f) return static_cast<T>(x);
  const double a = std::fabs(static_cast<double>(x));
  int e = 0;
  (void)std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1): floor(log2 a) = e - 1
  const int step = std::max(e - 1, L::min_exponent - 1) - (L::digits - 1);
  const double scaled = std::ldexp(a, -step);  // exact: a power-of-two scaling in double
  const double whole = std::floor(scaled);
  const auto threshold = static_cast<std::uint64_t>(std::ldexp(scaled - whole, 32));  // floor(frac * 2^32)
  const bool up = threshold + random >= (std::uint64_t{1} << 32);
  const double r = std::copysign(std::ldexp(whole + (up ? 1.0 : 0.0), step), static_cast<double>(x));
  if (std::fabs(r) > static_cast<double>(std::numeric_limits<float>::max()))  // only 2^128: bf16's (or f16's) inf
    return static_cast<T>(std::copysign(std::numeric_limits<float>::infinity(), x));
  return static_cast<T>(static_cast<float>(r));  // exact: r is a value of T (or T's next step past its max)
}

/// stochastic_round_to<bf16> as bits: the 16 bits bf16 drops plus the top
/// 16 random bits carry into the kept ones exactly when the rule above rounds
/// up (a carry out of the mantissa moves to the next binade, or from the
/// largest finite value to infinity). NaN is kept quiet, as a cast keeps it.
inline bf16 stochastic_round_bf16(float x, std::uint32_t random) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16(x);
  return bf16::from_bits(static_cast<std::uint16_t>((u + (random >> 16)) >> 16));
}

}  // namespace refx::detail
