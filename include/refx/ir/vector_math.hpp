#pragma once
// Vectorised transcendental math over f32 arrays: the element functions of
// exp, log, log1p, expm1, tanh, logistic, erf, sqrt, rsqrt, sin, cos and pow
// (ir/primitives/elementwise.hpp), computed with Eigen's packet math (the
// functions its array expressions use, `x.exp()` ...) at the widest SIMD
// width the build enables.
//
// Every element goes through the same packet code wherever it sits in the
// array: the tail that does not fill a packet is padded and computed as one,
// so a result does not depend on the element's position, the array's
// alignment or how a fused loop tiles it (fused and unfused evaluation are
// bit-identical).
//
// Eigen's functions are corrected where they leave IEEE results (measured by
// tests/ir/math_accuracy_test.cpp; bounds in docs/math.md): exp's clamp
// (exp(-inf) and exp(-100) were 2.9e-39, not 0 and a denormal; with
// AVX-512, exp(88.5) was inf), log of a denormal (log(1e-40) was log(FLT_MIN)),
// sqrt and rsqrt of denormals and infinity (Eigen's fast reciprocal square
// root), and erf of tiny arguments.
//
// Compiled where the GEMM is (ir/gemm.hpp, docs/compile-time.md): in the
// program's REFX_IMPLEMENTATION file, in refx::gemm (REFX_EXTERNAL_GEMM) or
// in refx::compiled; other translation units only declare it.

#include <cstdint>

#include <refx/config.hpp>
#include <refx/ir/gemm.hpp>  // where Eigen's kernels are defined (REFX_GEMM_DEFINITIONS)

#if REFX_GEMM_DEFINITIONS
// Naming Eigen's packet types (SSE's __m128 ...) as template arguments drops
// their alignment attributes, which GCC and clang warn about; the packets
// are only passed to Eigen's own templates, which expect that.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>  // erf's packet function
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#endif

namespace refx::detail {

/// The vectorised element functions.
enum class MathFn : std::uint8_t { exp, log, log1p, expm1, tanh, logistic, erf, sqrt, rsqrt, sin, cos, pow };

/// out[i] = f(a[i]) (pow: a[i] ^ b[i]; b is ignored otherwise) for i < n.
/// out may be a or b; otherwise it overlaps neither.
void vector_math_f32(MathFn f, const float* a, const float* b, float* out, std::int64_t n);

#if REFX_GEMM_DEFINITIONS
namespace vmath {
namespace ei = Eigen::internal;
using Packet = ei::packet_traits<float>::type;
inline constexpr int width = ei::unpacket_traits<Packet>::size;

inline Packet constant(float v) { return ei::pset1<Packet>(v); }
// Lane masks: Eigen's own (a packet of all-ones lanes) or, with AVX-512, the
// mask registers. Eigen's AVX-512 pcmp_lt and pselect convert between the
// two on every call, which made exp 5x slower than Eigen's pexp alone (1.24
// against 0.23 ns an element on an AVX-512 Xeon); with the mask registers it
// is 0.32. Both give the same lanes.
template <class P>
P less(const P& a, const P& b) {
  return ei::pcmp_lt(a, b);
}
template <class P>
P select(const P& mask, const P& a, const P& b) {
  return ei::pselect(mask, a, b);
}
template <class P>
P either(const P& a, const P& b) {
  return ei::por(a, b);
}
template <class P>
P both(const P& a, const P& b) {
  return ei::pand(a, b);
}
#if defined(__AVX512F__)
inline __mmask16 less(const __m512& a, const __m512& b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
inline __m512 select(__mmask16 mask, const __m512& a, const __m512& b) { return _mm512_mask_blend_ps(mask, b, a); }
inline __mmask16 either(__mmask16 a, __mmask16 b) { return static_cast<__mmask16>(a | b); }
inline __mmask16 both(__mmask16 a, __mmask16 b) { return static_cast<__mmask16>(a & b); }
#endif

/// The correctly rounded square root (Eigen's packet sqrt is an approximation
/// under EIGEN_FAST_MATH, wrong for denormals and infinity).
template <class P>
P sqrt(const P& x) {
  alignas(64) float lanes[width];
  ei::pstore(lanes, x);
  for (float& v : lanes) v = std::sqrt(v);
  return ei::pload<P>(lanes);
}
#if defined(__AVX512F__)
inline __m512 sqrt(const __m512& x) { return _mm512_sqrt_ps(x); }
#endif
#if defined(__AVX__)
inline __m256 sqrt(const __m256& x) { return _mm256_sqrt_ps(x); }
#endif
#if defined(__SSE2__)
inline __m128 sqrt(const __m128& x) { return _mm_sqrt_ps(x); }
#endif

/// exp, with x > 88 or x < -87 computed as exp(x / 2)^2: Eigen clamps its
/// argument (to +-88.72, or +-88.38 with AVX-512), so its results end at
/// 2.9e-39 below (no denormals, no 0 for -inf) and overflow early above.
inline Packet exp(const Packet& x) {
  const auto outside = either(less(constant(88.0f), x), less(x, constant(-87.0f)));
  const Packet e = ei::pexp(select(outside, ei::pmul(x, constant(0.5f)), x));
  return select(outside, ei::pmul(e, e), e);
}

/// log, with denormal x scaled by 2^24 first (Eigen flushes them to FLT_MIN).
inline Packet log(const Packet& x) {
  const auto tiny = both(less(x, constant(1.17549435e-38f)), less(constant(0.0f), x));
  const Packet r = ei::plog(select(tiny, ei::pmul(x, constant(16777216.0f)), x));
  return select(tiny, ei::padd(r, constant(-16.6355323f)), r);  // - 24 ln 2
}

inline Packet expm1(const Packet& x) { return select(less(constant(88.0f), x), exp(x), ei::pexpm1(x)); }

/// 1 / (1 + exp(-x)), as e / (1 + e) with e = exp(x) for negative x (the
/// relative error stays small where the result is; Eigen's own logistic is
/// accurate to an absolute 1e-7 only: 6000 ulp at -8.5).
inline Packet logistic(const Packet& x) {
  const Packet e = exp(ei::pnegate(ei::pabs(x)));
  const Packet r = ei::pdiv(constant(1.0f), ei::padd(constant(1.0f), e));
  return select(less(x, constant(0.0f)), ei::pmul(e, r), r);
}

/// erf; below 2^-60 in magnitude it is x * 2 / sqrt(pi) (Eigen's polynomial
/// loses precision there, 37 ulp near FLT_MIN).
inline Packet erf(const Packet& x) {
  const auto tiny = less(ei::pabs(x), constant(8.67361738e-19f));
  return select(tiny, ei::pmul(x, constant(1.12837917f)), ei::scalar_erf_op<float>{}.packetOp(x));
}

/// pow for positive normal x and finite y: exp(y * log(x)) in double with
/// Eigen's double packets, rounded to float once. (Eigen's float pow rounds
/// y * log(x) to float first: its error grows with the result's exponent, 77
/// ulp near 1e38.) The other lanes (zeros and negative bases, whose signs
/// Eigen loses; denormal bases; infinities and NaN) take std::pow.
template <class P>
P pow(const P& x, const P& y) {
  using PD = ei::packet_traits<double>::type;
  constexpr int dwidth = ei::unpacket_traits<PD>::size;
  alignas(64) float xs[width], ys[width], rs[width];
  ei::pstore(xs, x);
  ei::pstore(ys, y);
  // HasLog and HasExp are enumerators (ints): clang warns on && of constants.
  constexpr bool double_packets =
      ei::packet_traits<double>::HasLog != 0 && ei::packet_traits<double>::HasExp != 0 && width % dwidth == 0;
  if constexpr (double_packets) {
    alignas(64) double xd[width], yd[width], rd[width];
    for (int i = 0; i < width; ++i) {
      xd[i] = static_cast<double>(xs[i]);
      yd[i] = static_cast<double>(ys[i]);
    }
    for (int i = 0; i < width; i += dwidth)
      ei::pstore(rd + i, ei::pexp(ei::pmul(ei::pload<PD>(yd + i), ei::plog(ei::pload<PD>(xd + i)))));
    for (int i = 0; i < width; ++i) {
      const bool ordinary = xs[i] >= 1.17549435e-38f && xs[i] < INFINITY && std::fabs(ys[i]) < INFINITY;
      rs[i] = ordinary ? static_cast<float>(rd[i]) : std::pow(xs[i], ys[i]);
    }
  } else {
    for (int i = 0; i < width; ++i) rs[i] = std::pow(xs[i], ys[i]);
  }
  return ei::pload<P>(rs);
}

template <class K>
void apply(K k, const float* a, const float* b, float* out, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + width <= n; i += width) ei::pstoreu(out + i, k(ei::ploadu<Packet>(a + i), ei::ploadu<Packet>(b + i)));
  if (i == n) return;
  // The tail, padded to a whole packet with 1s.
  alignas(64) float ta[width], tb[width], to[width];
  const auto m = static_cast<std::size_t>(n - i);
  std::fill_n(ta, width, 1.0f);
  std::fill_n(tb, width, 1.0f);
  std::memcpy(ta, a + i, m * sizeof(float));
  std::memcpy(tb, b + i, m * sizeof(float));
  ei::pstore(to, k(ei::pload<Packet>(ta), ei::pload<Packet>(tb)));
  std::memcpy(out + i, to, m * sizeof(float));
}

template <class K>
void apply_unary(K k, const float* a, float* out, std::int64_t n) {
  apply([&](const Packet& x, const Packet&) { return k(x); }, a, a, out, n);
}

}  // namespace vmath

void vector_math_f32(MathFn f, const float* a, const float* b, float* out, std::int64_t n) {
  namespace ei = vmath::ei;
  using P = vmath::Packet;
  switch (f) {
    case MathFn::exp: return vmath::apply_unary([](const P& x) { return vmath::exp(x); }, a, out, n);
    case MathFn::log: return vmath::apply_unary([](const P& x) { return vmath::log(x); }, a, out, n);
    case MathFn::log1p: return vmath::apply_unary([](const P& x) { return ei::plog1p(x); }, a, out, n);
    case MathFn::expm1: return vmath::apply_unary([](const P& x) { return vmath::expm1(x); }, a, out, n);
    case MathFn::tanh: return vmath::apply_unary([](const P& x) { return ei::ptanh(x); }, a, out, n);
    case MathFn::logistic: return vmath::apply_unary([](const P& x) { return vmath::logistic(x); }, a, out, n);
    case MathFn::erf: return vmath::apply_unary([](const P& x) { return vmath::erf(x); }, a, out, n);
    case MathFn::sqrt: return vmath::apply_unary([](const P& x) { return vmath::sqrt(x); }, a, out, n);
    case MathFn::rsqrt:
      return vmath::apply_unary([](const P& x) { return ei::pdiv(vmath::constant(1.0f), vmath::sqrt(x)); }, a, out, n);
    case MathFn::sin: return vmath::apply_unary([](const P& x) { return ei::psin(x); }, a, out, n);
    case MathFn::cos: return vmath::apply_unary([](const P& x) { return ei::pcos(x); }, a, out, n);
    case MathFn::pow: return vmath::apply([](const P& x, const P& y) { return vmath::pow(x, y); }, a, b, out, n);
  }
}
#endif  // REFX_GEMM_DEFINITIONS

}  // namespace refx::detail

#if REFX_GEMM_DEFINITIONS && defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
