// The one-byte floats f8e4m3fn and f8e5m2, bit for bit, against references
// derived here from the formats' definitions (not from refx's bit tricks):
// every code decoded; f32 and double values at, around and between every
// rounding boundary encoded (ties to even, subnormals, the overflow
// threshold, +-inf, NaN, -0); and every bf16 / f16 pattern, every code of the
// other f8 type and the integers converted. What overflow, inf and NaN become
// is ml_dtypes' default conversion (its float8.h ConvertImpl, kSaturate =
// false): f8e4m3fn has no infinity, so anything that rounds beyond 448 and
// +-inf become NaN of the value's sign; f8e5m2 overflows to +-inf.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <refx/core/dtype.hpp>
#include <refx/ir/detail/convert.hpp>

namespace {

using namespace refx;

float f32(std::uint32_t u) { return std::bit_cast<float>(u); }
std::uint32_t bits32(float f) { return std::bit_cast<std::uint32_t>(f); }

// ---------------------------------------------------------------- the formats, by definition

/// 1 sign bit, `e` exponent bits (bias 2^(e-1) - 1), `m` mantissa bits;
/// `finite`: no infinity, and only S.1111.111 is NaN (the "fn" types).
struct Layout {
  int e, m;
  bool finite;
  int bias() const { return (1 << (e - 1)) - 1; }
};
template <class T>
constexpr Layout layout_of() {
  if constexpr (std::is_same_v<T, f8e4m3fn>) return {4, 3, true};
  else return {5, 2, false};
}

enum class Kind { finite, infinite, nan };
struct Meaning {
  Kind kind;
  double value;  // finite: the value, signed (-0.0 for 0x80)
};

/// What code `b` stands for, read off the layout.
Meaning meaning(Layout f, std::uint8_t b) {
  const bool neg = (b & 0x80) != 0;
  const int all_ones = (1 << f.e) - 1;
  const int exponent = (b >> f.m) & all_ones, mantissa = b & ((1 << f.m) - 1);
  if (f.finite && exponent == all_ones && mantissa == (1 << f.m) - 1) return {Kind::nan, 0};
  if (!f.finite && exponent == all_ones)
    return {mantissa == 0 ? Kind::infinite : Kind::nan, neg ? -INFINITY : INFINITY};
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, 1 - f.bias() - f.m)
                                         : std::ldexp(1.0 + std::ldexp(mantissa, -f.m), exponent - f.bias());
  return {Kind::finite, neg ? -magnitude : magnitude};
}

/// The positive finite values in code order (code c has value values[c]),
/// plus the value one spacing past the largest, which is what rounding
/// beyond it aims at (not a code).
std::vector<long double> positive_grid(Layout f) {
  std::vector<long double> v;
  for (int c = 0; c < 0x80; ++c) {
    const Meaning mn = meaning(f, static_cast<std::uint8_t>(c));
    if (mn.kind != Kind::finite) break;
    v.push_back(mn.value);
  }
  const std::size_t n = v.size();
  v.push_back(v[n - 1] + (v[n - 1] - v[n - 2]));
  return v;
}

/// The code nearest to x (ties to the even code, whose last mantissa bit is
/// 0), with ml_dtypes' non-saturating overflow: beyond the largest finite
/// value (after rounding), and +-inf, give infinity, or NaN for a finite
/// type; NaN gives the type's quiet NaN with x's sign.
template <class T>
std::uint8_t reference_bits(long double x) {
  const Layout f = layout_of<T>();
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const std::uint8_t nan = f.finite ? 0x7f : 0x7e, overflow = f.finite ? 0x7f : 0x7c;
  if (std::isnan(x)) return sign | nan;
  const long double a = std::fabs(x);
  static const std::vector<long double> grid = positive_grid(f);
  const std::size_t past = grid.size() - 1;     // the index one past the largest finite code
  if (a >= grid[past]) return sign | overflow;  // inf too
  std::size_t c = 0;
  while (grid[c + 1] <= a) ++c;
  std::size_t r = c;
  if (a != grid[c]) {
    const long double below = a - grid[c], above = grid[c + 1] - a;
    r = below < above ? c : above < below ? c + 1 : (c % 2 == 0 ? c : c + 1);
  }
  return r == past ? sign | overflow : static_cast<std::uint8_t>(sign | r);
}

template <class T>
class Float8 : public ::testing::Test {};
using Float8Types = ::testing::Types<f8e4m3fn, f8e5m2>;
TYPED_TEST_SUITE(Float8, Float8Types);

// ---------------------------------------------------------------- decoding: all 256 codes

TYPED_TEST(Float8, EveryCodeDecodesToItsValue) {
  using T = TypeParam;
  int nans = 0, infinities = 0;
  for (int b = 0; b < 256; ++b) {
    const auto code = static_cast<std::uint8_t>(b);
    const float got = T::from_bits(code);
    const Meaning want = meaning(layout_of<T>(), code);
    if (want.kind == Kind::nan) {
      ++nans;
      // ml_dtypes gives f32's quiet NaN with the sign; the payload does not travel.
      ASSERT_EQ(bits32(got), ((b & 0x80) ? 0x80000000u : 0u) | 0x7fc00000u) << std::hex << b;
      continue;
    }
    if (want.kind == Kind::infinite) ++infinities;
    ASSERT_EQ(bits32(got), bits32(static_cast<float>(want.value))) << std::hex << b;  // -0 keeps its sign
    ASSERT_EQ(T(got).bits(), code) << std::hex << b;                                  // and back
    ASSERT_EQ(static_cast<double>(got), want.value) << std::hex << b;
  }
  if constexpr (std::is_same_v<T, f8e4m3fn>) {
    EXPECT_EQ(nans, 2);  // S.1111.111 only
    EXPECT_EQ(infinities, 0);
  } else {
    EXPECT_EQ(nans, 6);  // S.11111.{01,10,11}
    EXPECT_EQ(infinities, 2);
  }
}

TEST(Float8Decode, ChecklistValues) {
  EXPECT_EQ(float(f8e4m3fn::from_bits(0x7e)), 448.0f);
  EXPECT_EQ(float(f8e4m3fn::from_bits(0xfe)), -448.0f);
  EXPECT_EQ(float(f8e4m3fn::from_bits(0x78)), 256.0f);  // exponent 1111 is finite
  EXPECT_EQ(float(f8e4m3fn::from_bits(0x38)), 1.0f);
  EXPECT_EQ(float(f8e4m3fn::from_bits(0x08)), 0x1p-6f);  // smallest normal
  EXPECT_EQ(float(f8e4m3fn::from_bits(0x07)), 7 * 0x1p-9f);
  EXPECT_EQ(float(f8e4m3fn::from_bits(0x01)), 0x1p-9f);
  EXPECT_TRUE(std::isnan(float(f8e4m3fn::from_bits(0x7f))));
  EXPECT_TRUE(std::signbit(float(f8e4m3fn::from_bits(0x80))));
  EXPECT_EQ(float(f8e5m2::from_bits(0x7b)), 57344.0f);
  EXPECT_EQ(float(f8e5m2::from_bits(0x7c)), INFINITY);
  EXPECT_EQ(float(f8e5m2::from_bits(0xfc)), -INFINITY);
  EXPECT_TRUE(std::isnan(float(f8e5m2::from_bits(0x7d))));
  EXPECT_EQ(float(f8e5m2::from_bits(0x3c)), 1.0f);
  EXPECT_EQ(float(f8e5m2::from_bits(0x04)), 0x1p-14f);
  EXPECT_EQ(float(f8e5m2::from_bits(0x01)), 0x1p-16f);
  // numeric_limits as ml_dtypes defines them.
  using L4 = std::numeric_limits<f8e4m3fn>;
  using L5 = std::numeric_limits<f8e5m2>;
  EXPECT_EQ(float(L4::max()), 448.0f);
  EXPECT_EQ(float(L4::lowest()), -448.0f);
  EXPECT_EQ(float(L4::min()), 0x1p-6f);
  EXPECT_EQ(float(L4::denorm_min()), 0x1p-9f);
  EXPECT_EQ(float(L4::epsilon()), 0.125f);
  EXPECT_FALSE(L4::has_infinity);
  EXPECT_TRUE(std::isnan(float(L4::infinity())));  // ml_dtypes: infinity() is the NaN
  EXPECT_EQ(L4::digits, 4);
  EXPECT_EQ(L4::min_exponent, -5);
  EXPECT_EQ(L4::max_exponent, 9);
  EXPECT_EQ(float(L5::max()), 57344.0f);
  EXPECT_EQ(float(L5::min()), 0x1p-14f);
  EXPECT_EQ(float(L5::denorm_min()), 0x1p-16f);
  EXPECT_EQ(float(L5::epsilon()), 0.25f);
  EXPECT_EQ(float(L5::infinity()), INFINITY);
  EXPECT_EQ(L5::quiet_NaN().bits(), 0x7e);
  EXPECT_EQ(L5::max_exponent, 16);
}

// ---------------------------------------------------------------- f32 -> f8

TEST(Float8FromF32, E4m3fnChecklist) {
  const auto b = [](float x) { return f8e4m3fn(x).bits(); };
  EXPECT_EQ(b(1.0f), 0x38);
  EXPECT_EQ(b(0.1f), 0x1d);   // 1.6 * 2^-4: mantissa 4.8 -> 5
  EXPECT_EQ(b(17.0f), 0x58);  // a tie between 16 and 18: to even 16
  EXPECT_EQ(b(19.0f), 0x5a);  // a tie between 18 and 20: to even 20
  EXPECT_EQ(b(448.0f), 0x7e);
  EXPECT_EQ(b(464.0f), 0x7e);                        // the tie between 448 and (480): to even 448
  EXPECT_EQ(b(std::nextafter(464.0f, 1e9f)), 0x7f);  // beyond: NaN, not saturated
  EXPECT_EQ(b(-std::nextafter(464.0f, 1e9f)), 0xff);
  EXPECT_EQ(b(480.0f), 0x7f);
  EXPECT_EQ(b(1e10f), 0x7f);
  EXPECT_EQ(b(std::numeric_limits<float>::max()), 0x7f);
  EXPECT_EQ(b(INFINITY), 0x7f);  // no infinity: NaN
  EXPECT_EQ(b(-INFINITY), 0xff);
  EXPECT_EQ(b(NAN), 0x7f);
  EXPECT_EQ(b(-NAN), 0xff);
  EXPECT_EQ(b(f32(0x7f800001)), 0x7f);  // a signalling NaN too
  EXPECT_EQ(b(0.0f), 0x00);
  EXPECT_EQ(b(-0.0f), 0x80);
  EXPECT_EQ(b(0x1p-9f), 0x01);
  EXPECT_EQ(b(0x1p-10f), 0x00);  // half the smallest subnormal: a tie, to even zero
  EXPECT_EQ(b(std::nextafter(0x1p-10f, 1.0f)), 0x01);
  EXPECT_EQ(b(-0x1p-11f), 0x80);
  EXPECT_EQ(b(3 * 0x1p-10f), 0x02);     // 1.5 subnormal spacings: to even 2
  EXPECT_EQ(b(7.5f * 0x1p-9f), 0x08);   // between the largest subnormal and 2^-6: to even 2^-6
  EXPECT_EQ(b(f32(0x00000001)), 0x00);  // an f32 subnormal
}

TEST(Float8FromF32, E5m2Checklist) {
  const auto b = [](float x) { return f8e5m2(x).bits(); };
  EXPECT_EQ(b(1.0f), 0x3c);
  EXPECT_EQ(b(0.1f), 0x2e);  // 1.6 * 2^-4: mantissa 2.4 -> 2
  EXPECT_EQ(b(5.0f), 0x45);
  EXPECT_EQ(b(9.0f), 0x48);  // a tie between 8 and 10: to even 8
  EXPECT_EQ(b(57344.0f), 0x7b);
  EXPECT_EQ(b(std::nextafter(61440.0f, 0.0f)), 0x7b);
  EXPECT_EQ(b(61440.0f), 0x7c);  // the tie between 57344 and (65536): to even, infinity
  EXPECT_EQ(b(-61440.0f), 0xfc);
  EXPECT_EQ(b(std::numeric_limits<float>::max()), 0x7c);
  EXPECT_EQ(b(INFINITY), 0x7c);
  EXPECT_EQ(b(-INFINITY), 0xfc);
  EXPECT_EQ(b(NAN), 0x7e);  // the quiet NaN, S.11111.10
  EXPECT_EQ(b(-NAN), 0xfe);
  EXPECT_EQ(b(f32(0xff800001)), 0xfe);
  EXPECT_EQ(b(-0.0f), 0x80);
  EXPECT_EQ(b(0x1p-16f), 0x01);
  EXPECT_EQ(b(0x1p-17f), 0x00);
  EXPECT_EQ(b(3 * 0x1p-17f), 0x02);
  EXPECT_EQ(b(3.5f * 0x1p-16f), 0x04);  // into the normals (2^-14)
}

/// f32 patterns at and around every rounding boundary of T (the midpoints
/// between neighbouring values, the overflow threshold, the values
/// themselves), both signs; specials; every exponent; and random patterns.
template <class T>
std::vector<std::uint32_t> f32_patterns() {
  std::vector<std::uint32_t> p;
  const std::vector<long double> grid = positive_grid(layout_of<T>());
  for (std::size_t c = 0; c + 1 < grid.size(); ++c) {
    const float mid = static_cast<float>((grid[c] + grid[c + 1]) / 2);  // exact: a few bits
    const float at = static_cast<float>(grid[c]);
    for (int k = -4; k <= 4; ++k)
      for (std::uint32_t s : {0u, 0x80000000u}) {
        p.push_back(s | (bits32(mid) + static_cast<std::uint32_t>(k)));
        if (grid[c] != 0 || k >= 0) p.push_back(s | (bits32(at) + static_cast<std::uint32_t>(k)));
      }
  }
  for (std::uint32_t hi = 0; hi < 0x10000u; ++hi)  // every sign and exponent, a few mantissas each
    for (std::uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0xffffu}) p.push_back(hi << 16 | lo);
  std::mt19937 rng(8);
  for (int i = 0; i < 300000; ++i) p.push_back(static_cast<std::uint32_t>(rng()));
  return p;
}

TYPED_TEST(Float8, EveryF32AroundEveryBoundaryRoundsToTheNearest) {
  using T = TypeParam;
  const std::vector<std::uint32_t> patterns = f32_patterns<T>();
  int nans = 0;
  for (std::uint32_t u : patterns) {
    const float x = f32(u);
    const std::uint8_t got = T(x).bits();
    ASSERT_EQ(got, reference_bits<T>(x)) << std::hex << "f32 0x" << u;
    ASSERT_EQ(detail::convert<T>(x).bits(), got) << std::hex << "f32 0x" << u;  // the cast primitive's path
    nans += std::isnan(x);
  }
  EXPECT_GT(nans, 1000);
  EXPECT_GT(patterns.size(), 600000u);
}

// ---------------------------------------------------------------- double -> f8: one rounding

TYPED_TEST(Float8, DoublesRoundOnce) {
  using T = TypeParam;
  const std::vector<long double> grid = positive_grid(layout_of<T>());
  int cases = 0;
  for (std::size_t c = 0; c + 1 < grid.size(); ++c) {
    const double tie = static_cast<double>((grid[c] + grid[c + 1]) / 2);
    const double tiny = static_cast<double>(grid[c + 1] - grid[c]) * 0x1p-40;  // far below an f32 ulp of the tie
    for (const double x : {tie, tie - tiny, tie + tiny, std::nextafter(tie, 0.0), std::nextafter(tie, 1e300)})
      for (const double s : {1.0, -1.0}) {
        ASSERT_EQ(T(s * x).bits(), reference_bits<T>(s * x)) << fmt::format("double {:a}", s * x);
        ASSERT_EQ(detail::convert<T>(s * x).bits(), reference_bits<T>(s * x)) << fmt::format("double {:a}", s * x);
        ++cases;
      }
  }
  EXPECT_GT(cases, 500);
  EXPECT_EQ(T(1e300).bits(), reference_bits<T>(INFINITY));
  EXPECT_EQ(T(-1e-300).bits(), 0x80);
  EXPECT_EQ(T(-std::nan("")).bits(), reference_bits<T>(-std::numeric_limits<long double>::quiet_NaN()));
}

TEST(Float8FromDouble, TheClassicDoubleRounding) {
  // 1 + 2^-4 + 2^-30 is above the tie between 1 and 1.125 (e4m3fn), but its
  // f32 rounding is the tie itself, which would go down to even 1.
  EXPECT_EQ(f8e4m3fn(1.0 + 0x1p-4 + 0x1p-30).bits(), 0x39);
  EXPECT_EQ(f8e4m3fn(static_cast<float>(1.0 + 0x1p-4 + 0x1p-30)).bits(), 0x38);
  EXPECT_EQ(f8e5m2(1.0 + 0x1p-3 + 0x1p-30).bits(), 0x3d);
  EXPECT_EQ(f8e4m3fn(464.0 + 0x1p-20).bits(), 0x7f);  // just beyond the overflow tie
}

// ---------------------------------------------------------------- other element types <-> f8

TYPED_TEST(Float8, EveryHalfPatternConverts) {
  using T = TypeParam;
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const auto hb = static_cast<std::uint16_t>(h);
    const bf16 b = bf16::from_bits(hb);
    ASSERT_EQ(T(b).bits(), reference_bits<T>(static_cast<float>(b))) << std::hex << "bf16 0x" << h;
    ASSERT_EQ((detail::convert<T>(b).bits()), T(b).bits()) << std::hex << "bf16 0x" << h;
    const f16 f = f16::from_bits(hb);
    std::uint8_t want = reference_bits<T>(static_cast<float>(f));
    // ml_dtypes converts f16 -> f8e5m2 on the bits: a NaN keeps its upper byte, quiet bit set.
    if (std::is_same_v<T, f8e5m2> && std::isnan(static_cast<float>(f)))
      want = static_cast<std::uint8_t>((h >> 8) | 0x02);
    ASSERT_EQ(T(f).bits(), want) << std::hex << "f16 0x" << h;
    ASSERT_EQ((detail::convert<T>(f).bits()), want) << std::hex << "f16 0x" << h;
  }
}

TYPED_TEST(Float8, EveryCodeConvertsToEveryOtherFloat) {
  using T = TypeParam;
  using Other = std::conditional_t<std::is_same_v<T, f8e4m3fn>, f8e5m2, f8e4m3fn>;
  for (int b = 0; b < 256; ++b) {
    const T x = T::from_bits(static_cast<std::uint8_t>(b));
    const Meaning mn = meaning(layout_of<T>(), x.bits());
    const long double v = mn.kind == Kind::nan ? ((b & 0x80) ? -NAN : NAN) : mn.value;
    ASSERT_EQ((detail::convert<Other>(x).bits()), reference_bits<Other>(v)) << std::hex << b;
    ASSERT_EQ(Other(x).bits(), reference_bits<Other>(v)) << std::hex << b;
    const double d = detail::convert<double>(x);
    const bf16 h = detail::convert<bf16>(x);
    const f16 g = detail::convert<f16>(x);
    if (mn.kind == Kind::nan) {
      ASSERT_TRUE(std::isnan(d) && std::signbit(d) == ((b & 0x80) != 0)) << std::hex << b;
      ASSERT_EQ(h.bits(), (b & 0x80 ? 0xffc0 : 0x7fc0)) << std::hex << b;  // bf16's quiet NaN, signed
      if constexpr (std::is_same_v<T, f8e4m3fn>) {
        ASSERT_EQ(g.bits(), (b & 0x80 ? 0xfe00 : 0x7e00)) << std::hex << b;
      }
    } else {
      ASSERT_EQ(d, static_cast<double>(v)) << std::hex << b;  // exact
      ASSERT_EQ(std::signbit(d), std::signbit(v)) << std::hex << b;
      ASSERT_EQ(static_cast<double>(float(h)), d) << std::hex << b;
      ASSERT_EQ(static_cast<double>(float(g)), d) << std::hex << b;
    }
    // f8e5m2 -> f16 shifts the bits (NaN payloads included), as ml_dtypes does.
    if constexpr (std::is_same_v<T, f8e5m2>) {
      ASSERT_EQ(g.bits(), b << 8) << std::hex << b;
    }
  }
}

TYPED_TEST(Float8, IntegersAndBoolConvertBothWays) {
  using T = TypeParam;
  for (std::int64_t i = -70000; i <= 70000; i += 7) {
    ASSERT_EQ(detail::convert<T>(static_cast<std::int32_t>(i)).bits(), reference_bits<T>(i)) << i;
    ASSERT_EQ(detail::convert<T>(i).bits(), reference_bits<T>(i)) << i;
  }
  EXPECT_EQ(detail::convert<T>(std::int64_t{1} << 62).bits(), reference_bits<T>(INFINITY));
  EXPECT_EQ(detail::convert<T>(std::uint8_t{255}).bits(), reference_bits<T>(255));
  EXPECT_EQ(detail::convert<T>(true).bits(), reference_bits<T>(1));
  // f8 -> integer: truncated toward zero, saturated, NaN -> 0 (XLA's convert, as for every float).
  EXPECT_EQ(detail::convert<std::int32_t>(T(-2.5f)), -2);
  EXPECT_EQ(detail::convert<std::int8_t>(T(448.0f)), 127);
  EXPECT_EQ(detail::convert<std::uint8_t>(T(-3.0f)), 0);
  EXPECT_EQ(detail::convert<std::int32_t>(std::numeric_limits<T>::quiet_NaN()), 0);
  EXPECT_EQ(detail::convert<bool>(T(-0.0f)), false);
  EXPECT_EQ(detail::convert<bool>(T::from_bits(0x01)), true);
}

TEST(Float8Arithmetic, ComputesInF32AndRoundsOnce) {
  // 1.125 * 1.125 = 1.265625: e4m3fn rounds it to 1.25; (a * a) in f32 then once.
  const f8e4m3fn a(1.125f);
  EXPECT_EQ(float(a * a), 1.25f);
  EXPECT_EQ((f8e4m3fn(448.0f) + f8e4m3fn(32.0f)).bits(), 0x7f);  // 480: NaN, no saturation
  EXPECT_EQ((f8e5m2(57344.0f) + f8e5m2(8192.0f)).bits(), 0x7c);  // 65536: inf
  EXPECT_EQ((-f8e4m3fn(2.0f)).bits(), 0xc0);
  EXPECT_TRUE(f8e4m3fn(-0.0f) == f8e4m3fn(0.0f));
  EXPECT_FALSE(std::numeric_limits<f8e4m3fn>::quiet_NaN() == std::numeric_limits<f8e4m3fn>::quiet_NaN());
  EXPECT_TRUE(f8e5m2(1.0f) < f8e5m2(1.25f));
  EXPECT_EQ(fmt::format("{} {:.2f}", f8e4m3fn(0.1f), f8e5m2(3.0f)), "0.1015625 3.00");
}

}  // namespace
