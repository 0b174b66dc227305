// The bf16 path of dot (include/refx/ir/primitives/dot.hpp: bf16_dot) and
// its widening kernel (include/refx/ir/detail/convert.hpp: widen_bf16).
//
// widen_bf16 is checked on every one of the 65536 bf16 bit patterns against
// a reference that decodes sign, exponent and mantissa arithmetically
// (zeros, subnormals, normals, infinities; NaNs stay NaNs with their
// payload), at odd lengths and unaligned starts, and must not write past the
// end. bf16_dot widens the operands one panel of contraction indices at a
// time; these dots have contractions longer than a panel and not a multiple
// of it, so that partial panels and the accumulation across panels are
// exercised, with the tolerances of dot_test.cpp (f32 sums: |got - ref| <=
// 4 k 2^-24 sum_p |a_ip b_pj|, exact for small integers).

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <refx/ir/detail/convert.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/refx.hpp>

#include "support/testing.hpp"

using namespace refx;
using namespace refx::testing;

namespace {

/// The f32 value of bf16 bits, decoded field by field (not by shifting).
float decoded(std::uint16_t bits) {
  const bool negative = (bits & 0x8000u) != 0;
  const int exponent = (bits >> 7) & 0xff, mantissa = bits & 0x7f;
  double v = 0;
  if (exponent == 0xff) v = mantissa == 0 ? INFINITY : NAN;
  else if (exponent == 0) v = std::ldexp(mantissa, -126 - 7);
  else v = std::ldexp(128 + mantissa, exponent - 127 - 7);
  return static_cast<float>(negative ? -v : v);
}

std::vector<bf16> every_bf16() {
  std::vector<bf16> v;
  for (std::uint32_t b = 0; b < 0x10000u; ++b) v.push_back(bf16::from_bits(static_cast<std::uint16_t>(b)));
  return v;
}

/// Checks widened[i] against the decoded in[i]; NaNs must keep their bits (payload and sign) in the upper half.
void expect_widened(const bf16* in, const float* widened, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint16_t bits = in[i].bits();
    const float want = decoded(bits), got = widened[i];
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << "bits " << bits;
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got), static_cast<std::uint32_t>(bits) << 16) << "NaN payload of " << bits;
    } else {
      ASSERT_EQ(got, want) << "bits " << bits;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << "sign of bits " << bits;
    }
  }
}

TEST(WidenBf16, EveryBitPatternAtOddLengthsAndOffsets) {
  const std::vector<bf16> all = every_bf16();
  const float sentinel = 12345.0f;
  for (std::int64_t offset : {0, 1, 3}) {
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{15}, std::int64_t{17},
                           std::int64_t{33}, std::int64_t{65533}}) {
      // The window starts at `offset` elements in, and goes `n` long; shifting it over the patterns covers them all.
      for (std::int64_t start = 0; start + n <= static_cast<std::int64_t>(all.size()) && (n > 0 || start == 0);
           start += n > 100 ? n : 4093) {
        std::vector<float> out(static_cast<std::size_t>(n + offset + 1), sentinel);
        refx::detail::widen_bf16(all.data() + start, out.data() + offset, n);
        expect_widened(all.data() + start, out.data() + offset, n);
        for (std::int64_t i = 0; i < offset; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], sentinel) << "before";
        ASSERT_EQ(out.back(), sentinel) << "wrote past the end, n = " << n;
      }
    }
  }
  // Every pattern at once, as one call.
  std::vector<float> out(all.size());
  refx::detail::widen_bf16(all.data(), out.data(), static_cast<std::int64_t>(all.size()));
  expect_widened(all.data(), out.data(), static_cast<std::int64_t>(all.size()));
}

TEST(WidenBf16, ConvertBufferAgreesWithElementwiseConvert) {
  const std::vector<bf16> all = every_bf16();
  Buffer in = make_buffer<bf16>(Shape{256, 256}, all), out(DType::f32, Shape{256, 256});
  refx::detail::convert_buffer(in, out);
  const std::vector<float> got = contents<float>(out);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const float want = refx::detail::convert<float>(all[i]);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want)) << "bits " << all[i].bits();
  }
}

// ------------------------------------------------------ dot over several panels

/// Fractional values in [-2, 2), exact in bf16.
float fractional(std::int64_t i, std::int64_t salt) {
  return static_cast<float>((i * 37 + salt * 11) % 64 - 32) / 16.0f + 0.0078125f * static_cast<float>(i % 3);
}

/// a (m x k) times b (k x n, or n x k with trans_b), in double; `sum_abs` gets sum_p |a_ip b_pj|.
std::vector<double> reference(const std::vector<bf16>& a, const std::vector<bf16>& b, std::int64_t m, std::int64_t k,
                              std::int64_t n, bool trans_b, std::vector<double>& sum_abs) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  sum_abs.assign(c.size(), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p) {
        const double x = static_cast<float>(a[static_cast<std::size_t>(i * k + p)]);
        const double y = static_cast<float>(b[static_cast<std::size_t>(trans_b ? j * k + p : p * n + j)]);
        c[static_cast<std::size_t>(i * n + j)] += x * y;
        sum_abs[static_cast<std::size_t>(i * n + j)] += std::fabs(x * y);
      }
  return c;
}

/// dot<R>(a, b) (trans_b when TransB) of bf16 operands, by the interpreter.
template <class R, std::int64_t M, std::int64_t K, std::int64_t Nn, bool TransB>
std::vector<R> run_bf16_dot(const std::vector<bf16>& a, const std::vector<bf16>& b) {
  constexpr std::int64_t B0 = TransB ? Nn : K, B1 = TransB ? K : Nn;
  Graph g = trace([](VmemRef<const bf16, M, K> x, VmemRef<const bf16, B0, B1> y, VmemRef<R, M, Nn> z) {
    if constexpr (TransB) z.store(dot<R>(x.load(), y.load(), trans_b));
    else z.store(dot<R>(x.load(), y.load()));
  });
  Buffer bx = make_buffer<bf16>(Shape{M, K}, a), by = make_buffer<bf16>(Shape{B0, B1}, b), bz(dtype_v<R>, Shape{M, Nn});
  interpret(g, bx, by, bz);
  return contents<R>(bz);
}

template <std::int64_t M, std::int64_t K, std::int64_t Nn, bool TransB>
void check_fractional_f32(std::int64_t salt) {
  std::vector<bf16> a, b;
  for (std::int64_t i = 0; i < M * K; ++i) a.push_back(bf16(fractional(i, salt)));
  for (std::int64_t i = 0; i < K * Nn; ++i) b.push_back(bf16(fractional(i, salt + 1)));
  std::vector<double> sum_abs;
  const std::vector<double> want = reference(a, b, M, K, Nn, TransB, sum_abs);
  const std::vector<float> got = run_bf16_dot<float, M, K, Nn, TransB>(a, b);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), 4.0 * K * 0x1p-24 * sum_abs[i])
        << "element " << i << " of " << M << "x" << K << "x" << Nn << (TransB ? " trans_b" : "");
}

TEST(Bf16Dot, SeveralPanelsWithinTolerance) {
  check_fractional_f32<5, 600, 7, false>(1);    // panels of 256, 256 and 88
  check_fractional_f32<5, 600, 7, true>(2);     // columns of b's rows, panel by panel
  check_fractional_f32<33, 513, 40, false>(3);  // one index in the last panel
  check_fractional_f32<33, 513, 40, true>(4);
  check_fractional_f32<3, 256, 2, true>(5);  // exactly one panel
}

TEST(Bf16Dot, ScratchReusedAcrossShapesGivesFreshResults) {
  // A larger dot, then a smaller one (the scratch is larger than it needs),
  // then the larger one again with other values: each against its reference.
  check_fractional_f32<40, 700, 30, false>(6);
  check_fractional_f32<2, 300, 3, true>(7);
  check_fractional_f32<40, 700, 30, false>(8);
}

TEST(Bf16Dot, SmallIntegersOverPanelsAreExactAlsoIntoBf16) {
  // Products of {-1, 0, 1} summed over 520 indices: integers, exact in the
  // f32 sums; bf16 results are those sums rounded once (some beyond 2^8 round).
  constexpr std::int64_t M = 6, K = 520, Nn = 5;
  std::vector<bf16> a, b;
  for (std::int64_t i = 0; i < M * K; ++i) a.push_back(bf16(static_cast<float>((i * 7) % 3 - 1)));
  for (std::int64_t i = 0; i < K * Nn; ++i) b.push_back(bf16(static_cast<float>((i * 5 + 1) % 3 - 1)));
  std::vector<double> sum_abs;
  const std::vector<double> want = reference(a, b, M, K, Nn, false, sum_abs);
  const std::vector<float> wide = run_bf16_dot<float, M, K, Nn, false>(a, b);
  const std::vector<bf16> narrow = run_bf16_dot<bf16, M, K, Nn, false>(a, b);
  bool any_rounded = false;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const bf16 rounded(static_cast<float>(want[i]));
    EXPECT_EQ(static_cast<double>(wide[i]), want[i]) << "element " << i;
    EXPECT_EQ(narrow[i].bits(), rounded.bits()) << "element " << i << ", sum " << want[i];
    any_rounded = any_rounded || static_cast<double>(static_cast<float>(rounded)) != want[i];
  }
  EXPECT_TRUE(any_rounded) << "some sums should need more than bf16's 8 bits (terms from several panels)";
}

TEST(Bf16Dot, NonFiniteAndSubnormalOperandsInLaterPanels) {
  // Infinities, a NaN and subnormals placed in the second and third panels
  // of a: inf * 0 and inf - inf give NaN, inf * x gives inf, as in the
  // double reference (which has the same special values).
  constexpr std::int64_t M = 4, K = 600, Nn = 3;
  std::vector<bf16> a(M * K, bf16(0.5f)), b;
  for (std::int64_t i = 0; i < K * Nn; ++i) b.push_back(bf16(static_cast<float>(i % 4)));  // row 300: 0, 1, 2
  a[0 * K + 300] = std::numeric_limits<bf16>::infinity();
  a[1 * K + 520] = std::numeric_limits<bf16>::quiet_NaN();
  a[2 * K + 290] = std::numeric_limits<bf16>::infinity();
  a[2 * K + 590] = -std::numeric_limits<bf16>::infinity();
  a[3 * K + 400] = std::numeric_limits<bf16>::denorm_min();
  a[3 * K + 599] = bf16::from_bits(0x8005);  // a negative subnormal
  std::vector<double> sum_abs;
  const std::vector<double> want = reference(a, b, M, K, Nn, false, sum_abs);
  const std::vector<float> got = run_bf16_dot<float, M, K, Nn, false>(a, b);
  int nans = 0, infs = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
      ++nans;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(static_cast<double>(got[i]), want[i]) << "element " << i;
      ++infs;
    } else {
      EXPECT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), 4.0 * K * 0x1p-24 * sum_abs[i]) << "element " << i;
    }
  }
  EXPECT_GT(nans, 0);
  EXPECT_GT(infs, 0);
}

}  // namespace
