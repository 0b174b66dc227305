// Conversions into and out of the 2-byte floats, and the in-kernel cast
// between every pair of element types. References are computed another way
// than refx does: f16 by the compiler's _Float16 (libgcc rounds float and
// double to it correctly), bf16 by picking the nearer of the two bf16 values
// around x in double (ties to the even one). Checklist items 23-27 and 30 of
// the numerics reference (section E) are spelled out in hex.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>

namespace {

using namespace refx;

std::uint16_t bits_of(bf16 h) { return h.bits(); }
std::uint16_t bits_of(f16 h) { return h.bits(); }
float f32(std::uint32_t u) { return std::bit_cast<float>(u); }

// ---------------------------------------------------------------- references

/// The bf16 nearest to finite or infinite x (not NaN), ties to even, without
/// refx's bit trick: the two bf16 neighbours of x are found by truncating x's
/// f32 pattern (x is exact in f32 when it is a float; for doubles the candidates
/// come from the double's own magnitude), and compared in double.
std::uint16_t bf16_reference(double x) {
  const bool neg = std::signbit(x);
  const double a = std::fabs(x);
  if (std::isinf(a)) return neg ? 0xff80 : 0x7f80;
  // Largest bf16 magnitude <= a: walk down from the f32 truncation.
  std::uint16_t lo = 0;
  if (a > 0) {
    float f = static_cast<float>(a);                       // may round up
    if (static_cast<double>(f) > a) f = std::nextafter(f, 0.0f);
    lo = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(f) >> 16);  // truncation: below or at a
  }
  const auto value = [](std::uint16_t b) { return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16)); };
  const std::uint16_t hi = static_cast<std::uint16_t>(lo + 1);  // 0x7f80 past the max: infinity
  std::uint16_t r;
  if (value(lo) == a) {
    r = lo;
  } else {
    // Past the largest finite bf16 the "upper neighbour" is 2^128 for rounding purposes.
    const double up = lo == 0x7f7f ? std::ldexp(1.0, 128) : value(hi);
    const double dl = a - value(lo), dh = up - a;
    r = dl < dh ? lo : dh < dl ? hi : ((lo & 1) == 0 ? lo : hi);
  }
  return static_cast<std::uint16_t>(r | (neg ? 0x8000 : 0));
}

std::uint16_t f16_reference(float x) { return std::bit_cast<std::uint16_t>(static_cast<_Float16>(x)); }
std::uint16_t f16_reference(double x) { return std::bit_cast<std::uint16_t>(static_cast<_Float16>(x)); }

bool is_nan_bf16(std::uint16_t b) { return (b & 0x7fff) > 0x7f80; }
bool is_nan_f16(std::uint16_t b) { return (b & 0x7fff) > 0x7c00; }

// ---------------------------------------------------------------- f32 -> bf16

TEST(Bf16FromF32, ChecklistHexCases) {  // items 23, 24
  EXPECT_EQ(bits_of(bf16(f32(0x3F808000))), 0x3F80);  // 1 + 2^-8: a tie, to even
  EXPECT_EQ(bits_of(bf16(f32(0x3F818000))), 0x3F82);  // a tie, up to even
  EXPECT_EQ(bits_of(bf16(f32(0x3F808001))), 0x3F81);  // just above the tie
  EXPECT_EQ(bits_of(bf16(f32(0x3F80FFFF))), 0x3F81);
  EXPECT_EQ(bits_of(bf16(259.0f)), 0x4382);           // 259 -> 260
  EXPECT_EQ(bits_of(bf16(257.0f)), 0x4380);           // 257 -> 256
  EXPECT_EQ(bits_of(bf16(0.1f)), 0x3DCD);
  EXPECT_EQ(bits_of(bf16(f32(0x7F7F7FFF))), 0x7F7F);  // just below the overflow tie
  EXPECT_EQ(bits_of(bf16(f32(0x7F7F8000))), 0x7F80);  // the tie goes to even = inf
  EXPECT_EQ(bits_of(bf16(std::numeric_limits<float>::max())), 0x7F80);
  EXPECT_EQ(bits_of(bf16(-std::numeric_limits<float>::infinity())), 0xFF80);
  EXPECT_EQ(bits_of(bf16(-std::numeric_limits<float>::max())), 0xFF80);
}

TEST(Bf16FromF32, NaNStaysNaNWithItsSign) {  // item 25
  for (std::uint32_t u : {0x7F800001u, 0x7FC00000u, 0x7FFFFFFFu, 0x7F80FFFFu}) {
    const std::uint16_t b = bits_of(bf16(f32(u)));
    EXPECT_TRUE(is_nan_bf16(b)) << std::hex << u;
    EXPECT_EQ(b & 0x8000, 0) << std::hex << u;
    const std::uint16_t n = bits_of(bf16(f32(u | 0x80000000u)));
    EXPECT_TRUE(is_nan_bf16(n)) << std::hex << u;
    EXPECT_NE(n & 0x8000, 0) << std::hex << u;
  }
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16::from_bits(0x7FC0))));
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16::from_bits(0xFF81))));
  EXPECT_TRUE(std::isnan(static_cast<float>(std::numeric_limits<bf16>::quiet_NaN())));
}

TEST(Bf16FromF32, SubnormalsAndSignedZero) {  // item 26 (refx does not flush)
  EXPECT_EQ(bits_of(bf16(f32(0x00018000))), 0x0002);
  EXPECT_EQ(bits_of(bf16(f32(0x00008000))), 0x0000);
  EXPECT_EQ(bits_of(bf16(f32(0x007FFFFF))), 0x0080);  // rounds up into the normals
  EXPECT_EQ(bits_of(bf16(f32(0x80008001))), 0x8001);
  EXPECT_EQ(bits_of(bf16(-0.0f)), 0x8000);
  EXPECT_EQ(bits_of(bf16(0.0f)), 0x0000);
  EXPECT_EQ(bits_of(bf16(f32(0x80000001))), 0x8000);  // underflows to -0
}

TEST(Bf16FromF32, MatchesTheNearestNeighbourReference) {
  // Every tie and its two neighbours over a spread of exponents, plus random patterns.
  std::vector<std::uint32_t> patterns;
  for (std::uint32_t e = 0; e < 256; e += 3)
    for (std::uint32_t m : {0x0000u, 0x8000u, 0x7FFFu, 0x8001u, 0x18000u, 0x17FFFu, 0x7F8000u, 0x7FFFFFu, 0x10000u})
      for (std::uint32_t s : {0u, 0x80000000u}) patterns.push_back(s | (e << 23) | (m & 0x7FFFFFu));
  std::mt19937 rng(23);
  for (int i = 0; i < 200000; ++i) patterns.push_back(static_cast<std::uint32_t>(rng()));
  int checked = 0;
  for (std::uint32_t u : patterns) {
    const float x = f32(u);
    if (std::isnan(x)) continue;
    ASSERT_EQ(bits_of(bf16(x)), bf16_reference(x)) << std::hex << "f32 0x" << u;
    ++checked;
  }
  EXPECT_GT(checked, 190000);
}

// ---------------------------------------------------------------- f32 -> f16

TEST(F16FromF32, ChecklistCases) {  // item 27
  EXPECT_EQ(bits_of(f16(65519.0f)), 0x7BFF);
  EXPECT_EQ(bits_of(f16(65520.0f)), 0x7C00);
  EXPECT_EQ(bits_of(f16(-65520.0f)), 0xFC00);
  EXPECT_EQ(bits_of(f16(6e-8f)), 0x0001);
  EXPECT_EQ(bits_of(f16(65504.0f)), 0x7BFF);
  EXPECT_EQ(bits_of(f16(-0.0f)), 0x8000);
  EXPECT_EQ(bits_of(f16(std::numeric_limits<float>::infinity())), 0x7C00);
  const std::uint16_t nan = bits_of(f16(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_TRUE(is_nan_f16(nan));
  EXPECT_EQ(nan & 0x8000, 0);
  const std::uint16_t neg_nan = bits_of(f16(f32(0xFF800001u)));  // signalling, negative
  EXPECT_TRUE(is_nan_f16(neg_nan));
  EXPECT_NE(neg_nan & 0x8000, 0);
  EXPECT_TRUE(std::isnan(static_cast<float>(f16::from_bits(0x7E00))));
}

TEST(F16FromF32, SubnormalTiesAndUnderflow) {
  const float ulp = 0x1p-24f;  // the smallest f16 subnormal
  EXPECT_EQ(bits_of(f16(0.5f * ulp)), 0x0000);         // a tie, to even zero
  EXPECT_EQ(bits_of(f16(1.5f * ulp)), 0x0002);         // a tie, to even 2
  EXPECT_EQ(bits_of(f16(2.5f * ulp)), 0x0002);
  EXPECT_EQ(bits_of(f16(std::nextafter(0.5f * ulp, 1.0f))), 0x0001);
  EXPECT_EQ(bits_of(f16(-0.25f * ulp)), 0x8000);
  EXPECT_EQ(bits_of(f16(1023.5f * ulp)), 0x0400);      // rounds up into the normals
}

TEST(F16FromF32, MatchesFloat16OfTheCompiler) {
  std::vector<std::uint32_t> patterns;
  // Every f32 exponent that lands near f16's range, with ties and their neighbours.
  for (std::uint32_t e = 90; e < 150; ++e)
    for (std::uint32_t m : {0x0000u, 0x1000u, 0x0FFFu, 0x1001u, 0x3000u, 0x2FFFu, 0x7FF000u, 0x7FFFFFu, 0x2000u})
      for (std::uint32_t s : {0u, 0x80000000u}) patterns.push_back(s | (e << 23) | m);
  std::mt19937 rng(27);
  for (int i = 0; i < 200000; ++i) patterns.push_back(static_cast<std::uint32_t>(rng()));
  // And a dense band through the subnormals and the overflow threshold.
  for (std::uint32_t u = 0x33000000u; u < 0x39000000u; u += 0x1003u) patterns.push_back(u);
  for (std::uint32_t u = 0x477F0000u; u < 0x47800000u; u += 0x11u) patterns.push_back(u);
  for (std::uint32_t u : patterns) {
    const float x = f32(u);
    if (std::isnan(x)) continue;
    ASSERT_EQ(bits_of(f16(x)), f16_reference(x)) << std::hex << "f32 0x" << u;
  }
}

// ---------------------------------------------------------------- double -> 2-byte: one rounding

/// Doubles at, just below and just above every tie between neighbours of the
/// 2-byte grid whose f32 rounding would land on the tie (a double rounding
/// through f32 would then break the tie the wrong way).
template <class H>
void expect_doubles_round_once(double (*grid_value)(std::uint16_t), std::uint16_t last_finite,
                               std::uint16_t (*reference)(double)) {
  int cases = 0;
  for (std::uint32_t b = 1; b < last_finite; b += 7) {
    const double lo = grid_value(static_cast<std::uint16_t>(b)), hi = grid_value(static_cast<std::uint16_t>(b + 1));
    const double tie = lo + (hi - lo) / 2;
    const double tiny = (hi - lo) * 0x1p-40;  // far below an f32 ulp of the tie
    for (const double x : {tie, tie - tiny, tie + tiny, std::nextafter(tie, 0.0), std::nextafter(tie, 1e300)}) {
      for (const double s : {1.0, -1.0}) {
        const double v = s * x;
        ASSERT_EQ(H(v).bits(), reference(v)) << "double " << fmt::format("{:a}", v) << " near the tie above bits 0x"
                                             << std::hex << b;
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 1000);
}

TEST(HalfFromDouble, Bf16RoundsOnce) {
  // The classic double-rounding case, spelled out: 1 + 2^-8 + 2^-40 is above
  // the tie, but rounds to the tie 1 + 2^-8 in f32, which would go down to even.
  EXPECT_EQ(bf16(1.0 + 0x1p-8 + 0x1p-40).bits(), 0x3F81);
  EXPECT_EQ(bf16(1.0 + 0x1p-8 - 0x1p-40).bits(), 0x3F80);
  EXPECT_EQ(bf16(1.0 + 0x1p-8).bits(), 0x3F80);
  expect_doubles_round_once<bf16>(
      [](std::uint16_t b) { return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16)); },
      0x7F7F, [](double x) { return bf16_reference(x); });
  EXPECT_EQ(bf16(1e300).bits(), 0x7F80);
  EXPECT_EQ(bf16(-1e-300).bits(), 0x8000);
  EXPECT_TRUE(is_nan_bf16(bf16(std::nan("")).bits()));
}

TEST(HalfFromDouble, F16RoundsOnce) {
  EXPECT_EQ(f16(1.0 + 0x1p-11 + 0x1p-40).bits(), 0x3C01);
  EXPECT_EQ(f16(1.0 + 0x1p-11).bits(), 0x3C00);
  expect_doubles_round_once<f16>([](std::uint16_t b) { return static_cast<double>(static_cast<_Float16>(std::bit_cast<_Float16>(b))); },
                                 0x7BFF, [](double x) { return f16_reference(x); });
  EXPECT_EQ(f16(65519.999).bits(), 0x7BFF);
  EXPECT_EQ(f16(65520.0).bits(), 0x7C00);
  EXPECT_TRUE(is_nan_f16(f16(-std::nan("")).bits()));
}

// ---------------------------------------------------------------- 2-byte -> f32: exact

TEST(HalfToF32, EveryBf16PatternIsExact) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const float f = bf16::from_bits(static_cast<std::uint16_t>(b));
    if (is_nan_bf16(static_cast<std::uint16_t>(b))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_EQ(std::signbit(f), (b & 0x8000) != 0) << std::hex << b;
      continue;
    }
    ASSERT_EQ(std::bit_cast<std::uint32_t>(f), b << 16) << std::hex << b;
    ASSERT_EQ(bf16(f).bits(), b) << std::hex << b;  // and back
  }
}

TEST(HalfToF32, EveryF16PatternIsExact) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const float f = f16::from_bits(static_cast<std::uint16_t>(b));
    const float want = static_cast<float>(std::bit_cast<_Float16>(static_cast<std::uint16_t>(b)));
    if (is_nan_f16(static_cast<std::uint16_t>(b))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_EQ(std::signbit(f), (b & 0x8000) != 0) << std::hex << b;
      continue;
    }
    ASSERT_EQ(std::bit_cast<std::uint32_t>(f), std::bit_cast<std::uint32_t>(want)) << std::hex << b;
    ASSERT_EQ(f16(f).bits(), b) << std::hex << b;
  }
}

// ---------------------------------------------------------------- in-kernel cast, 12 x 12

/// Inputs every cast sees, as doubles: zeros, fractions (truncation toward
/// zero), out-of-range values both ways, infinities and NaN (floats only),
/// integers at the edges of every integer type, and the f8 edges (448 and
/// the overflow tie 464 of f8e4m3fn, 57344 and 61440 of f8e5m2, subnormal ties).
std::vector<double> cast_inputs() {
  return {0.0, -0.0, 1.0, -1.0, 1.7, -1.7, 2.5, 127.0, 128.0, 255.0, 256.0, 300.0, -5.0, -128.0, -129.0,
          448.0, 464.0, -465.0, 57344.0, 61440.0, 0x1p-10, -3 * 0x1p-17, 65504.0, 65520.0, 2147483647.0, -2147483648.0, 3e9, -3e9, 4294967295.0, 5e9, 1e19, -1e19, 1e30,
          std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::quiet_NaN()};
}

/// Element i of the source array of type F: the input squeezed into F the
/// way a host would write it (integers wrap modulo 2^n from an int64 that
/// holds the integral part; floats convert directly).
template <class F>
F source_element(double x) {
  if constexpr (std::is_same_v<F, bool>) {
    return x != 0;
  } else if constexpr (is_floating_v<F>) {
    return static_cast<F>(x);
  } else {
    if (std::isnan(x) || std::fabs(x) > 9e18) return F{};
    return static_cast<F>(static_cast<std::int64_t>(x));  // modular, C++20
  }
}

/// D.9 by hand: what cast<T>(F a) must give, computed without refx's convert.
template <class T, class F>
T cast_reference(F a) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (is_narrow_float_v<F>) return static_cast<float>(a) != 0.0f;
    else return a != F{};
  } else if constexpr (is_floating_v<T>) {
    if constexpr (std::is_same_v<F, bool>) return T(a ? 1.0f : 0.0f);
    else if constexpr (is_narrow_float_v<F>) return static_cast<T>(static_cast<float>(a));
    else if constexpr (is_narrow_float_v<T>) return T(static_cast<double>(a));  // double -> half / f8 rounds once
    else return static_cast<T>(a);
  } else if constexpr (std::is_same_v<F, bool> || is_integer_v<F>) {
    // Integer narrowing keeps the low bits (two's complement).
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<std::uint64_t>(static_cast<std::int64_t>(a))));
  } else {
    // Float -> int: NaN -> 0, saturate, else truncate toward zero.
    const long double x = static_cast<long double>(static_cast<double>(a));
    if (std::isnan(x)) return T{};
    const long double lo = static_cast<long double>(std::numeric_limits<T>::min());
    const long double hi = static_cast<long double>(std::numeric_limits<T>::max());
    const long double t = std::trunc(x);
    if (t <= lo) return std::numeric_limits<T>::min();
    if (t >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(t);
  }
}

template <class T>
bool same_element(T got, T want) {
  if constexpr (is_narrow_float_v<T>) {
    if (std::isnan(static_cast<float>(want))) return std::isnan(static_cast<float>(got));
    return got.bits() == want.bits();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(want)) return std::isnan(got);
    return std::bit_cast<std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>>(got) ==
           std::bit_cast<std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>>(want);
  } else {
    return got == want;
  }
}

template <class F, class T>
void check_cast() {
  const std::vector<double> xs = cast_inputs();
  const auto n = static_cast<std::int64_t>(xs.size());
  std::vector<F> src;
  for (double x : xs) src.push_back(source_element<F>(x));
  Buffer in(dtype_v<F>, Shape{n});
  std::copy(src.begin(), src.end(), in.data<F>());
  Buffer out(dtype_v<T>, Shape{n});
  out.fill_zero();
  const Graph g = trace([](Ref<const F, extents<dyn>, Vmem> x, Ref<T, extents<dyn>, Vmem> y) { y.store(cast<T>(x.load())); },
                        {Shape{n}, Shape{n}});
  interpret(g, in, out);
  const T* o = out.data<T>();
  for (std::int64_t i = 0; i < n; ++i) {
    const T want = cast_reference<T>(src[static_cast<std::size_t>(i)]);
    EXPECT_TRUE(same_element(o[i], want)) << name_of(dtype_v<F>) << " -> " << name_of(dtype_v<T>) << " of "
                                          << fmt::format("{}", src[static_cast<std::size_t>(i)]) << ": got "
                                          << fmt::format("{}", o[i]) << ", expected " << fmt::format("{}", want);
  }
}

TEST(InKernelCast, EveryPairOfElementTypes) {
  int pairs = 0;
  for (int f = 0; f <= static_cast<int>(last_dtype); ++f)
    for (int t = 0; t <= static_cast<int>(last_dtype); ++t) {
      visit_dtype(static_cast<DType>(f), [&](auto from) {
        visit_dtype(static_cast<DType>(t), [&](auto to) {
          check_cast<typename decltype(from)::type, typename decltype(to)::type>();
        });
      });
      ++pairs;
    }
  EXPECT_EQ(pairs, 144);
}

TEST(InKernelCast, ChecklistIntegerConversions) {  // item 30's converts
  EXPECT_EQ(cast_reference<std::int32_t>(std::nanf("")), 0);
  const auto run = [](auto tag, double x) {
    using T = typename decltype(tag)::type;
    Buffer in = Buffer::from<float>(Shape{1}, std::vector<float>{static_cast<float>(x)});
    Buffer out(dtype_v<T>, Shape{1});
    const Graph g = trace([](Ref<const float, extents<1>, Vmem> a, Ref<T, extents<1>, Vmem> b) { b.store(cast<T>(a.load())); });
    interpret(g, in, out);
    return static_cast<std::int64_t>(out.data<T>()[0]);
  };
  EXPECT_EQ(run(type_tag<std::int32_t>{}, std::nan("")), 0);
  EXPECT_EQ(run(type_tag<std::int32_t>{}, 3e9), 2147483647);
  EXPECT_EQ(run(type_tag<std::int32_t>{}, -3e9), -2147483648LL);
  EXPECT_EQ(run(type_tag<std::int8_t>{}, 300.0), 127);
  EXPECT_EQ(run(type_tag<std::int8_t>{}, -1.7), -1);
  EXPECT_EQ(run(type_tag<std::uint8_t>{}, -5.0), 0);
  EXPECT_EQ(run(type_tag<std::uint32_t>{}, 5e9), 4294967295LL);
  // int -> int truncates: int32 300 -> int8 44, int32 -1 -> uint8 255.
  const auto narrow = [](auto tag, std::int32_t x) {
    using T = typename decltype(tag)::type;
    Buffer in = Buffer::from<std::int32_t>(Shape{1}, std::vector<std::int32_t>{x});
    Buffer out(dtype_v<T>, Shape{1});
    const Graph g = trace([](Ref<const std::int32_t, extents<1>, Vmem> a, Ref<T, extents<1>, Vmem> b) { b.store(cast<T>(a.load())); });
    interpret(g, in, out);
    return static_cast<std::int64_t>(out.data<T>()[0]);
  };
  EXPECT_EQ(narrow(type_tag<std::int8_t>{}, 300), 44);
  EXPECT_EQ(narrow(type_tag<std::uint8_t>{}, -1), 255);
  EXPECT_EQ(narrow(type_tag<std::uint32_t>{}, -1), 4294967295LL);
}

}  // namespace

namespace {

// Item 31: the product of two bf16 values is exact in f32. refx's dot has no
// preferred element type: a bf16 dot computes in f32 and rounds its result
// once; casting the operands to f32 first keeps the exact product.
TEST(Dot, Bf16ProductsAreExactInF32) {
  const Graph g = trace([](VmemRef<const bf16, 1, 2> a, VmemRef<const bf16, 2, 1> b, VmemRef<bf16, 1, 1> low,
                           VmemRef<float, 1, 1> high) {
    low.store(dot(a.load(), b.load()));
    high.store(dot(cast<float>(a.load()), cast<float>(b.load())));
  });
  const bf16 x(1.0078125f), z(0.0f);
  Buffer a = Buffer::from<bf16>(Shape{1, 2}, std::vector<bf16>{x, z});
  Buffer b = Buffer::from<bf16>(Shape{2, 1}, std::vector<bf16>{x, z});
  Buffer low(DType::bf16, Shape{1, 1}), high(DType::f32, Shape{1, 1});
  interpret(g, a, b, low, high);
  EXPECT_EQ(high.data<float>()[0], 1.01568603515625f);  // 1 + 2^-6 + 2^-14, exactly
  EXPECT_EQ(low.data<bf16>()[0].bits(), bf16(1.01568603515625f).bits());
  EXPECT_EQ(float(low.data<bf16>()[0]), 1.015625f);
}

}  // namespace
