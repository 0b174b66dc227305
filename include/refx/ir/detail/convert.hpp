#pragma once
// Converting elements between element types, as XLA's convert does: the
// cast primitive, and dot's conversions around its f32 GEMM. Apart from the
// primitives so that both can include it without the primitives' registration.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <refx/core/dtype.hpp>
#include <refx/ir/buffer.hpp>

namespace refx::detail {

/// One element converted to T. Floating point to integer rounds toward zero
/// and saturates (NaN becomes 0), as XLA does; a plain static_cast would be
/// undefined behaviour out of range. Integers narrow modulo 2^n.
/// bf16, f16 and the f8 types convert through f32 (exact); into them, values
/// round to nearest even (a double directly, without a double rounding; f8
/// overflow and NaN as core/float8.hpp says). f16 <-> f8e5m2 convert on the
/// bits, as ml_dtypes does (the same values; NaNs keep their upper payload).
template <class T, class F>
T convert(F a) {
  if constexpr (std::is_same_v<F, f16> && std::is_same_v<T, f8e5m2>) {
    return f8e5m2::from_bits(f8e5m2_bits_of_f16(a.bits()));
  } else if constexpr (std::is_same_v<F, f8e5m2> && std::is_same_v<T, f16>) {
    return f16::from_bits(static_cast<std::uint16_t>(a.bits() << 8));
  } else if constexpr (is_narrow_float_v<F> && !std::is_same_v<T, F>) {
    return convert<T>(static_cast<float>(a));
  } else if constexpr (is_narrow_float_v<T>) {
    return static_cast<T>(a);
  } else if constexpr (std::is_floating_point_v<F> && is_integer_v<T>) {
    if (std::isnan(a)) return T{};
    // F(max) is max itself or (rounded up) 2^k, F(min) is exactly -2^k: at or
    // beyond them the truncated value does not fit, or is the bound itself.
    if (a >= static_cast<F>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    if (a <= static_cast<F>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    return static_cast<T>(a);
  } else {
    return static_cast<T>(a);
  }
}

/// `n` bf16 values widened to f32: each bf16 is the upper half of the f32
/// of the same value, so its 16 bits shifted up (exact for every value:
/// subnormals, infinities, NaNs with their payload), as convert<float> does.
/// Whole steps of 16 elements, then the rest: GCC vectorises the fixed-length
/// inner loop (zero-extend and shift) at -O2 too, where its cheap cost model
/// leaves a loop of unknown length scalar (AVX2 at -march=x86-64-v3).
inline void widen_bf16(const bf16* in, float* out, std::int64_t n) noexcept {
  constexpr std::int64_t step = 16;
  const auto widen = [](bf16 h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h.bits()) << 16); };
  const std::int64_t whole = n - n % step;
  for (std::int64_t i = 0; i < whole; i += step)
    for (std::int64_t j = 0; j < step; ++j) out[i + j] = widen(in[i + j]);
  for (std::int64_t i = whole; i < n; ++i) out[i] = widen(in[i]);
}

/// `n` elements of type `from` at `in` converted to `to` into `out`: the
/// cast primitive, and dot's conversions to and from its f32 GEMM.
inline void convert_run(DType from, const void* in, DType to, void* out, std::int64_t n) {
  if (from == DType::bf16 && to == DType::f32) {
    widen_bf16(static_cast<const bf16*>(in), static_cast<float*>(out), n);
    return;
  }
  visit_dtype(from, [&](auto f) {
    visit_dtype(to, [&](auto t) {
      using F = typename decltype(f)::type;
      using T = typename decltype(t)::type;
      const F* a = static_cast<const F*>(in);
      T* o = static_cast<T*>(out);
      for (std::int64_t i = 0; i < n; ++i) o[i] = convert<T>(a[i]);
    });
  });
}

/// Every element of `in` converted into `out` (same element count).
inline void convert_buffer(const Buffer& in, Buffer& out) {
  convert_run(in.dtype(), in.data(), out.dtype(), out.data(), out.size());
}

}  // namespace refx::detail
