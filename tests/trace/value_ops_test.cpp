// The value ops kernel bodies use most: rsqrt, tanh, logistic, pow, the
// bitwise ops & | ^ ~ on integers, XLA's shifts, and reshape / transpose of
// Values. Each runs in the reference interpreter (and a few through a
// compiled kernel, where the fusion pass chains them) against a host
// reference computed in double or in wider integers.

#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>

#include "support/interpret_testing.hpp"
#include "support/testing.hpp"

using namespace refx;
using namespace refx::testing;

namespace {

constexpr std::int64_t N = 12;

/// Relative tolerance of one rounding to T (plus slack for libm).
template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, bf16>) return 1.0 / 128;
  else if constexpr (std::is_same_v<T, f16>) return 1.0 / 1024;
  else if constexpr (std::is_same_v<T, float>) return 4e-7;
  else return 1e-15;
}

/// got[i] agrees with want[i] (computed in double) to T's precision; NaN and
/// infinities must match exactly.
template <class T>
::testing::AssertionResult close_to(const std::vector<T>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(static_cast<compute_t<T>>(got[i])), w = want[i];
    const bool ok = std::isnan(w) ? std::isnan(g)
                    : std::isinf(w) ? g == w
                                    : std::fabs(g - w) <= tolerance<T>() * std::max(1.0, std::fabs(w));
    if (!ok) return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", expected " << w;
  }
  return ::testing::AssertionSuccess();
}

template <class T>
std::vector<T> as(const std::vector<double>& v) {
  std::vector<T> out;
  for (double x : v) out.push_back(static_cast<T>(x));
  return out;
}
template <class T>
std::vector<double> widened(const std::vector<T>& v) {
  std::vector<double> out;
  for (T x : v) out.push_back(static_cast<double>(static_cast<compute_t<T>>(x)));
  return out;
}

/// z = f(x) and z = f(x, y) over 1-D Refs of N elements, in the interpreter.
template <class R, class T, class F>
std::vector<R> run_unary(const std::vector<T>& a, F f) { return interpret_unary<N, R>(a, f); }
template <class R, class T, class F>
std::vector<R> run_binary(const std::vector<T>& a, const std::vector<T>& b, F f) { return interpret_binary<N, R>(a, b, f); }

template <class T>
class FloatMath : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double, bf16, f16>;
TYPED_TEST_SUITE(FloatMath, FloatTypes);

// Inputs are T-representable, so the reference sees what the kernel sees.
const std::vector<double> kArgs = {-30, -4.5, -1, -0.25, 0, 0.125, 0.5, 1, 2, 3.75, 9, 40};
const std::vector<double> kPositive = {0.0625, 0.25, 0.5, 1, 1.5, 2, 3, 4, 9, 16, 10, 12};

TYPED_TEST(FloatMath, RsqrtTanhLogistic) {
  using T = TypeParam;
  const auto pos = as<T>(kPositive), x = as<T>(kArgs);
  std::vector<double> want_rsqrt, want_tanh, want_logistic;
  for (double v : widened(pos)) want_rsqrt.push_back(1.0 / std::sqrt(v));
  for (double v : widened(x)) want_tanh.push_back(std::tanh(v));
  for (double v : widened(x)) want_logistic.push_back(1.0 / (1.0 + std::exp(-v)));
  EXPECT_TRUE(close_to(run_unary<T>(pos, [](auto v) { return rsqrt(v); }), want_rsqrt));
  EXPECT_TRUE(close_to(run_unary<T>(x, [](auto v) { return tanh(v); }), want_tanh));
  EXPECT_TRUE(close_to(run_unary<T>(x, [](auto v) { return logistic(v); }), want_logistic));
}

TYPED_TEST(FloatMath, EdgeCases) {
  using T = TypeParam;
  constexpr double inf = std::numeric_limits<double>::infinity();
  // rsqrt: 0 -> +inf, negative -> NaN, +inf -> 0. logistic saturates without
  // NaN: exp(-x) overflows to +inf for very negative x (1/inf = 0).
  std::vector<double> in = {0, -1, inf, -inf, 1, 4, 0.25, 16, 64, 256, 1, 1};
  std::vector<double> want = {inf, NAN, 0, NAN, 1, 0.5, 2, 0.25, 0.125, 0.0625, 1, 1};
  EXPECT_TRUE(close_to(run_unary<T>(as<T>(in), [](auto v) { return rsqrt(v); }), want));
  std::vector<double> big = {-inf, -1e4, -60000, inf, 1e4, 60000, 0, 0, 0, 0, 0, 0};
  std::vector<double> sig = {0, 0, 0, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
  EXPECT_TRUE(close_to(run_unary<T>(as<T>(big), [](auto v) { return logistic(v); }), sig));
  std::vector<double> th = {-1, -1, -1, 1, 1, 1, 0, 0, 0, 0, 0, 0};
  EXPECT_TRUE(close_to(run_unary<T>(as<T>(big), [](auto v) { return tanh(v); }), th));
}

TYPED_TEST(FloatMath, PowOfValuesAndWithALiteralExponent) {
  using T = TypeParam;
  const auto a = as<T>(kPositive), b = as<T>(kArgs);
  std::vector<double> want, squared, root, base2;
  for (std::size_t i = 0; i < kPositive.size(); ++i) {
    const double x = widened(a)[i], y = std::clamp(widened(b)[i], -2.5, 2.5);
    want.push_back(std::pow(x, y));
    squared.push_back(x * x);
    root.push_back(std::sqrt(x));
    base2.push_back(std::pow(2.0, y));
  }
  std::vector<double> clamped;
  for (double y : widened(b)) clamped.push_back(std::clamp(y, -2.5, 2.5));  // f16 holds every result
  const auto e = as<T>(clamped);
  EXPECT_TRUE(close_to(run_binary<T>(a, e, [](auto x, auto y) { return pow(x, y); }), want));
  EXPECT_TRUE(close_to(run_unary<T>(a, [](auto x) { return pow(x, 2); }), squared));
  EXPECT_TRUE(close_to(run_unary<T>(a, [](auto x) { return pow(x, 0.5); }), root));
  EXPECT_TRUE(close_to(run_unary<T>(e, [](auto y) { return pow(2, y); }), base2));
}

// Through a compiled kernel: the fusion pass chains the new ops into one loop.
TEST(FloatMath, ChainedInACompiledKernel) {
  auto exe = kernel([](VmemRef<const float, 64> x, VmemRef<float, 64> y) {
               const auto v = x.load();
               y.store(logistic(v) * tanh(v) + rsqrt(v * v + 1.0f) - pow(v, 2.0f));
             }).compile(Mesh{{"x", 1}});
  const auto in = Array::generate<float>(1, Shape{64}, [](int, std::int64_t i) { return 0.25f * static_cast<float>(i - 32); });
  const auto out = exe(in)[0].to_host<float>(0);
  for (std::int64_t i = 0; i < 64; ++i) {
    const double v = 0.25 * static_cast<double>(i - 32);
    const double want = 1.0 / (1.0 + std::exp(-v)) * std::tanh(v) + 1.0 / std::sqrt(v * v + 1.0) - v * v;
    EXPECT_NEAR(out[static_cast<std::size_t>(i)], want, 2e-6 * std::max(1.0, std::fabs(want))) << "element " << i;
  }
}

// ---------------------------------------------------------------- bits

template <class T>
class Bits : public ::testing::Test {};
using IntTypes = ::testing::Types<std::uint32_t, std::int32_t, std::uint8_t, std::int8_t, std::int64_t>;
TYPED_TEST_SUITE(Bits, IntTypes);

template <class T>
std::vector<T> patterns() {
  // Bit patterns with the top bit set and clear, all ones, zero.
  const std::uint64_t raw[N] = {0,    1,          0xFF,       0x5A5A5A5A5A5A5A5Aull, 0xA5A5A5A5A5A5A5A5ull, ~0ull,
                                0x80, 0x80000000, 0x8000000000000000ull, 0x7F, 0x12345678, 0xF0F0F0F0F0F0F0F0ull};
  std::vector<T> v;
  for (std::uint64_t r : raw) v.push_back(static_cast<T>(r));  // modulo 2^n
  return v;
}

TYPED_TEST(Bits, AndOrXorNot) {
  using T = TypeParam;
  using U = std::make_unsigned_t<T>;
  const auto a = patterns<T>();
  std::vector<T> b(a.rbegin(), a.rend());
  std::vector<T> want_and, want_or, want_xor, want_not, want_lit;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto x = static_cast<U>(a[i]), y = static_cast<U>(b[i]);
    want_and.push_back(static_cast<T>(static_cast<U>(x & y)));
    want_or.push_back(static_cast<T>(static_cast<U>(x | y)));
    want_xor.push_back(static_cast<T>(static_cast<U>(x ^ y)));
    want_not.push_back(static_cast<T>(static_cast<U>(~x)));
    want_lit.push_back(static_cast<T>(static_cast<U>((x & U{0x3C}) ^ U{0x41})));
  }
  EXPECT_EQ(run_binary<T>(a, b, [](auto x, auto y) { return x & y; }), want_and);
  EXPECT_EQ(run_binary<T>(a, b, [](auto x, auto y) { return x | y; }), want_or);
  EXPECT_EQ(run_binary<T>(a, b, [](auto x, auto y) { return x ^ y; }), want_xor);
  EXPECT_EQ(run_unary<T>(a, [](auto x) { return ~x; }), want_not);
  EXPECT_EQ(run_unary<T>(a, [](auto x) { return (x & 0x3C) ^ 0x41; }), want_lit);
}

/// XLA's shifts, written from their definition on the bit pattern widened to
/// 64 bits (an independent route from the kernel's n-bit arithmetic).
template <class T>
T ref_shift(int kind, T a, T b) {
  constexpr int bits = static_cast<int>(sizeof(T) * 8);
  const std::uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
  const std::uint64_t ua = static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<T>>(a));
  const std::uint64_t amount = static_cast<std::make_unsigned_t<T>>(b);
  const bool negative = (ua >> (bits - 1)) & 1;
  if (amount >= static_cast<std::uint64_t>(bits)) return kind == 2 && negative ? static_cast<T>(mask) : T{};
  if (kind == 0) return static_cast<T>((ua << amount) & mask);
  if (kind == 1) return static_cast<T>(ua >> amount);
  const std::int64_t sa = negative ? static_cast<std::int64_t>(ua | ~mask) : static_cast<std::int64_t>(ua);
  return static_cast<T>(static_cast<std::uint64_t>(sa >> amount) & mask);
}

TYPED_TEST(Bits, ShiftsFollowXla) {
  using T = TypeParam;
  constexpr int bits = static_cast<int>(sizeof(T) * 8);
  // Every pattern against amounts 0, 1, bits-1, bits, bits+1 and 255 (-1 as i8).
  const std::vector<int> amounts = {0, 1, 3, bits - 1, bits, bits + 1, 255};
  for (int amount : amounts) {
    const auto a = patterns<T>();
    const std::vector<T> b(a.size(), static_cast<T>(static_cast<std::make_unsigned_t<T>>(amount)));
    for (int kind = 0; kind < 3; ++kind) {
      std::vector<T> want;
      for (std::size_t i = 0; i < a.size(); ++i) want.push_back(ref_shift<T>(kind, a[i], b[i]));
      const auto got = run_binary<T>(a, b, [kind](auto x, auto y) {
        return kind == 0 ? shift_left(x, y) : kind == 1 ? shift_right_logical(x, y) : shift_right_arithmetic(x, y);
      });
      EXPECT_EQ(got, want) << "kind " << kind << ", amount " << amount;
    }
  }
}

TYPED_TEST(Bits, ShiftByALiteral) {
  using T = TypeParam;
  const auto a = patterns<T>();
  std::vector<T> want;
  for (T x : a) want.push_back(static_cast<T>(ref_shift<T>(1, ref_shift<T>(0, x, T{3}), T{2}) | ref_shift<T>(2, x, T{5})));
  EXPECT_EQ(run_unary<T>(a, [](auto x) { return shift_right_logical(shift_left(x, 3), 2) | shift_right_arithmetic(x, 5); }),
            want);
}

TEST(Bits, NegativeAmountShiftsEverythingOut) {
  const std::vector<std::int32_t> a = {-8, 8, -1, 1, 0, 7, -7, 100, -100, 5, -5, 3};
  const std::vector<std::int32_t> b(a.size(), -1);
  std::vector<std::int32_t> want;
  for (std::int32_t x : a) want.push_back(x < 0 ? -1 : 0);
  EXPECT_EQ(run_binary<std::int32_t>(a, b, [](auto x, auto y) { return shift_right_arithmetic(x, y); }), want);
  EXPECT_EQ(run_binary<std::int32_t>(a, b, [](auto x, auto y) { return shift_left(x, y); }),
            std::vector<std::int32_t>(a.size(), 0));
}

TEST(Bits, BoolStaysLogical) {
  const std::vector<float> a = {-2, -1, 0, 1, 2, 3, -3, 4, -4, 5, -5, 6}, b = {1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1};
  const auto got = run_binary<bool>(a, b, [](auto x, auto y) {
    return ((x > 0.0f) & (y > 0.0f)) | (((x < 0.0f) ^ (y < 0.0f)) & ~(x == 0.0f));
  });
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool want = (a[i] > 0 && b[i] > 0) || (((a[i] < 0) != (b[i] < 0)) && a[i] != 0);
    EXPECT_EQ(got[i], want) << i;
  }
}

// Unpacks four u8 from each u32 with shifts and masks in a compiled (fused) kernel.
TEST(Bits, UnpackBytesInACompiledKernel) {
  auto exe = kernel([](VmemRef<const std::uint32_t, 16> packed, VmemRef<std::uint32_t, 4, 16> bytes) {
               const auto p = packed.load();
               for (int k = 0; k < 4; ++k) bytes.at(k).store(shift_right_logical(p, std::uint32_t(8 * k)) & 0xFFu);
             }).compile(Mesh{{"x", 1}});
  const auto in = Array::generate<std::uint32_t>(1, Shape{16}, [](int, std::int64_t i) {
    return static_cast<std::uint32_t>(0x01020304u * static_cast<std::uint32_t>(i + 1) + 0x9E3779B9u);
  });
  const auto host_in = in.to_host<std::uint32_t>(0);
  const auto out = exe(in)[0].to_host<std::uint32_t>(0);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(out[static_cast<std::size_t>(k * 16 + i)], (host_in[static_cast<std::size_t>(i)] >> (8 * k)) & 0xFFu);
}

// ---------------------------------------------------------------- shapes

template <class T>
class Shapes : public ::testing::Test {};
using ShapeTypes = ::testing::Types<float, double, bf16, std::int8_t, std::int64_t, bool>;
TYPED_TEST_SUITE(Shapes, ShapeTypes);

TYPED_TEST(Shapes, ReshapeKeepsRowMajorOrder) {
  using T = TypeParam;
  Graph g = trace([](VmemRef<const T, 2, 6> x, VmemRef<T, 3, 4> y, VmemRef<T, 12> z, VmemRef<T, 1, 2, 1, 6> w) {
    const auto v = x.load();
    y.store(reshape<3, 4>(v));
    z.store(reshape<12>(reshape<4, 3>(v)));
    w.store(reshape<1, 2, 1, 6>(v));
  });
  std::vector<T> data;
  for (int i = 0; i < 12; ++i) data.push_back(static_cast<T>(std::is_same_v<T, bool> ? i % 3 == 0 : i * 3 - 7));
  Buffer bx = make_buffer<T>(Shape{2, 6}, data), by(dtype_v<T>, Shape{3, 4}), bz(dtype_v<T>, Shape{12}),
         bw(dtype_v<T>, Shape{1, 2, 1, 6});
  interpret(g, bx, by, bz, bw);
  EXPECT_EQ(contents<T>(by), data);
  EXPECT_EQ(contents<T>(bz), data);
  EXPECT_EQ(contents<T>(bw), data);
}

TYPED_TEST(Shapes, TransposeOfAMatrix) {
  using T = TypeParam;
  constexpr std::int64_t M = 37, K = 45;  // several 16-element tiles each way, and partial ones
  Graph g = trace([](VmemRef<const T, M, K> x, VmemRef<T, K, M> y, VmemRef<T, M, K> z) {
    const auto t = transpose(x.load());
    static_assert(std::is_same_v<decltype(t), const Value<T, extents<K, M>>>);
    y.store(t);
    z.store(transpose(t));
  });
  std::vector<T> data;
  for (std::int64_t i = 0; i < M * K; ++i) data.push_back(static_cast<T>(std::is_same_v<T, bool> ? i % 5 == 1 : (i * 7) % 101 - 50));
  Buffer bx = make_buffer<T>(Shape{M, K}, data), by(dtype_v<T>, Shape{K, M}), bz(dtype_v<T>, Shape{M, K});
  interpret(g, bx, by, bz);
  const auto got = contents<T>(by);
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < K; ++j)
      ASSERT_EQ(got[static_cast<std::size_t>(j * M + i)], data[static_cast<std::size_t>(i * K + j)]) << i << "," << j;
  EXPECT_EQ(contents<T>(bz), data);
}

TEST(Shapes, ReshapeOfADynamicValueChecksTheCountWhenTraced) {
  auto f = [] {
    trace([](Ref<const float, extents<dyn>> x, VmemRef<float, 3, 4> y) { y.store(reshape<3, 4>(x.load())); },
          {Shape{10}, Shape{3, 4}});
  };
  EXPECT_TRUE(throws_with<TraceError>(f, {"refx: reshape:", "[10]", "[3,4]", "element count", "value_ops_test.cpp"}));
  // The same shape traced with 12 elements is fine.
  Graph g = trace([](Ref<const float, extents<dyn>> x, VmemRef<float, 3, 4> y) { y.store(reshape<3, 4>(x.load())); },
                  {Shape{12}, Shape{3, 4}});
  Buffer bx = make_buffer<float>(Shape{12}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), by(DType::f32, Shape{3, 4});
  interpret(g, bx, by);
  EXPECT_EQ(contents<float>(by), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(Shapes, TransposeOfADynamicMatrix) {
  Graph g = trace([](Ref<const std::int32_t, extents<dyn, dyn>> x, Ref<std::int32_t, extents<dyn, dyn>> y) {
    y.store(transpose(x.load()));
  }, {Shape{2, 3}, Shape{3, 2}});
  Buffer bx = make_buffer<std::int32_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}), by(DType::i32, Shape{3, 2});
  interpret(g, bx, by);
  EXPECT_EQ(contents<std::int32_t>(by), (std::vector<std::int32_t>{1, 4, 2, 5, 3, 6}));
}

// jnp.tile and lax.slice_in_dim (flash attention's tile(m, (1, n)) and
// l[:, :head_dim]), against the same indexing written out on the host.
TEST(Shapes, TileAndSliceInDim) {
  Graph g = trace([](VmemRef<const std::int32_t, 2, 3> x, VmemRef<const std::int32_t, 4> r, VmemRef<std::int32_t, 4, 6> t,
                     VmemRef<std::int32_t, 12> t1, VmemRef<std::int32_t, 2, 2> s, VmemRef<std::int32_t, 1, 3> s0) {
    t.store(tile<2, 2>(x.load()));
    t1.store(tile<3>(r.load()));
    s.store(slice_in_dim<1, 1, 2>(x.load()));
    s0.store(slice_in_dim<0, 1, 1>(x.load()));
  });
  Buffer bx = make_buffer<std::int32_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}), br = make_buffer<std::int32_t>(Shape{4}, {7, 8, 9, 10});
  Buffer bt(DType::i32, Shape{4, 6}), bt1(DType::i32, Shape{12}), bs(DType::i32, Shape{2, 2}), bs0(DType::i32, Shape{1, 3});
  interpret(g, bx, br, bt, bt1, bs, bs0);
  std::vector<std::int32_t> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) want.push_back((i % 2) * 3 + j % 3 + 1);
  EXPECT_EQ(contents<std::int32_t>(bt), want);
  EXPECT_EQ(contents<std::int32_t>(bt1), (std::vector<std::int32_t>{7, 8, 9, 10, 7, 8, 9, 10, 7, 8, 9, 10}));
  EXPECT_EQ(contents<std::int32_t>(bs), (std::vector<std::int32_t>{2, 3, 5, 6}));
  EXPECT_EQ(contents<std::int32_t>(bs0), (std::vector<std::int32_t>{4, 5, 6}));
}

// jnp.roll / pltpu.roll with a static shift, and pltpu.bitcast on a Value.
TEST(Shapes, RollAndBitcast) {
  Graph g = trace([](VmemRef<const std::int32_t, 2, 4> x, VmemRef<std::int32_t, 2, 4> r1, VmemRef<std::int32_t, 2, 4> r0,
                     VmemRef<std::int32_t, 2, 4> rn, VmemRef<const float, 2> f, VmemRef<std::uint32_t, 2> bits,
                     VmemRef<std::uint8_t, 8> bytes) {
    r1.store(roll<1, 1>(x.load()));    // columns one to the right
    r0.store(roll<0, 3>(x.load()));    // 3 mod 2 = 1 row down
    rn.store(roll<1, -1>(x.load()));   // one to the left
    bits.store(bitcast<std::uint32_t>(f.load()));
    bytes.store(bitcast<std::uint8_t>(f.load()));
  });
  Buffer bx = make_buffer<std::int32_t>(Shape{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), bf = make_buffer<float>(Shape{2}, {1.0f, -2.5f});
  Buffer b1(DType::i32, Shape{2, 4}), b0(DType::i32, Shape{2, 4}), bn(DType::i32, Shape{2, 4}), bb(DType::u32, Shape{2}),
      b8(DType::u8, Shape{8});
  interpret(g, bx, b1, b0, bn, bf, bb, b8);
  EXPECT_EQ(contents<std::int32_t>(b1), (std::vector<std::int32_t>{4, 1, 2, 3, 8, 5, 6, 7}));
  EXPECT_EQ(contents<std::int32_t>(b0), (std::vector<std::int32_t>{5, 6, 7, 8, 1, 2, 3, 4}));
  EXPECT_EQ(contents<std::int32_t>(bn), (std::vector<std::int32_t>{2, 3, 4, 1, 6, 7, 8, 5}));
  EXPECT_EQ(contents<std::uint32_t>(bb), (std::vector<std::uint32_t>{std::bit_cast<std::uint32_t>(1.0f),
                                                                     std::bit_cast<std::uint32_t>(-2.5f)}));
  std::vector<std::uint8_t> want(8);
  const float fs[] = {1.0f, -2.5f};
  std::memcpy(want.data(), fs, 8);
  EXPECT_EQ(contents<std::uint8_t>(b8), want);
}

// pltpu.roll with a shift read when the kernel runs (negative, zero, past
// the extent), with stride / stride_axis (row i rolls by shift + 2 i), and
// with a C++ integer shift: each against the host's rotation.
TEST(Shapes, RollByARunTimeShiftAndWithAStride) {
  constexpr std::int64_t R = 3, C = 5;
  Graph g = trace([](VmemRef<const std::int32_t, R, C> x, SmemRef<const std::int32_t, 1> shift,
                     VmemRef<std::int32_t, R, C> plain, VmemRef<std::int32_t, R, C> strided,
                     VmemRef<std::int32_t, R, C> rows, VmemRef<std::int32_t, R, C> fixed) {
    plain.store(roll<1>(x.load(), shift[0]));
    strided.store(roll<1>(x.load(), shift[0], roll_stride<0>(2)));
    rows.store(roll<0>(x.load(), shift[0], roll_stride<1>(1)));
    fixed.store(roll<1>(x.load(), 3));
  });
  std::vector<std::int32_t> xs;
  for (std::int32_t i = 0; i < R * C; ++i) xs.push_back(i * 3 + 1);
  const auto at = [&](std::int64_t i, std::int64_t j) { return xs[static_cast<std::size_t>(i * C + j)]; };
  const auto mod = [](std::int64_t a, std::int64_t n) { return ((a % n) + n) % n; };
  for (std::int32_t s : {-9, -1, 0, 1, 4, 5, 13}) {
    Buffer bx = make_buffer<std::int32_t>(Shape{R, C}, xs), bs = make_buffer<std::int32_t>(Shape{1}, {s});
    Buffer bp(DType::i32, Shape{R, C}), bst(DType::i32, Shape{R, C}), br(DType::i32, Shape{R, C}),
        bf(DType::i32, Shape{R, C});
    interpret(g, bx, bs, bp, bst, br, bf);
    std::vector<std::int32_t> plain, strided, rows, fixed;
    for (std::int64_t i = 0; i < R; ++i)
      for (std::int64_t j = 0; j < C; ++j) {
        plain.push_back(at(i, mod(j - s, C)));
        strided.push_back(at(i, mod(j - (s + 2 * i), C)));
        rows.push_back(at(mod(i - (s + j), R), j));
        fixed.push_back(at(i, mod(j - 3, C)));
      }
    EXPECT_EQ(contents<std::int32_t>(bp), plain) << s;
    EXPECT_EQ(contents<std::int32_t>(bst), strided) << s;
    EXPECT_EQ(contents<std::int32_t>(br), rows) << s;
    EXPECT_EQ(contents<std::int32_t>(bf), fixed) << s;
  }
  const int line = __LINE__ + 3;  // the roll's
  const auto negative = [] {
    (void)trace([](VmemRef<const std::int32_t, R, C> x, VmemRef<std::int32_t, R, C> y) {
      y.store(roll<1>(x.load(), 1, roll_stride<0>(-1)));
    });
  };
  EXPECT_TRUE(throws_with<TraceError>(negative, {"refx: roll's stride is -1; it must be >= 0",
                                                 fmt::format("value_ops_test.cpp:{}", line)}));
}

}  // namespace
