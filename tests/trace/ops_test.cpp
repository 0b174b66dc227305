// Every elementwise, structural and reduction op, run by the reference
// interpreter on one device and checked against plain C++ loops or values
// computed by hand.

#include <gtest/gtest.h>

#include <bit>
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

constexpr std::int64_t N = 8;

/// Left operands: negative, zero and positive; floats get a fractional part.
template <class T>
std::vector<T> lhs() {
  const double base[N] = {-7, -3, -1, 0, 2, 5, 9, 12};
  std::vector<T> v;
  for (double x : base) v.push_back(static_cast<T>(std::is_floating_point_v<T> ? x + 0.5 : x));
  return v;
}
/// Right operands: never zero (so / and % are defined), mixed signs.
template <class T>
std::vector<T> rhs() {
  const double base[N] = {2, -4, 3, 1, 5, -2, 4, 7};
  std::vector<T> v;
  for (double x : base) v.push_back(static_cast<T>(std::is_floating_point_v<T> ? x + 0.25 : x));
  return v;
}

/// z = f(x) and z = f(x, y) over 1-D Refs of N elements, in the interpreter.
template <class R, class T, class F>
std::vector<R> run_unary(const std::vector<T>& a, F f) { return interpret_unary<N, R>(a, f); }
template <class R, class T, class F>
std::vector<R> run_binary(const std::vector<T>& a, const std::vector<T>& b, F f) { return interpret_binary<N, R>(a, b, f); }

template <class R, class T, class F>
std::vector<R> expected_binary(const std::vector<T>& a, const std::vector<T>& b, F f) {
  std::vector<R> out;
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(static_cast<R>(f(a[i], b[i])));
  return out;
}
template <class R, class T, class F>
std::vector<R> expected_unary(const std::vector<T>& a, F f) {
  std::vector<R> out;
  for (T x : a) out.push_back(static_cast<R>(f(x)));
  return out;
}

template <class T>
class NumericOps : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(NumericOps, NumericTypes);

template <class T>
class FloatOps : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FloatOps, FloatTypes);

template <class T>
class IntOps : public ::testing::Test {};
using IntTypes = ::testing::Types<std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(IntOps, IntTypes);

// ---------------------------------------------------------------- arithmetic

TYPED_TEST(NumericOps, Add) {
  using T = TypeParam;
  const auto a = lhs<T>(), b = rhs<T>();
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x + y; }),
                             expected_binary<T>(a, b, [](T x, T y) { return x + y; })));
}

TYPED_TEST(NumericOps, Sub) {
  using T = TypeParam;
  const auto a = lhs<T>(), b = rhs<T>();
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x - y; }),
                             expected_binary<T>(a, b, [](T x, T y) { return x - y; })));
  // Operand order matters.
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return y - x; }),
                             expected_binary<T>(a, b, [](T x, T y) { return y - x; })));
}

TYPED_TEST(NumericOps, Mul) {
  using T = TypeParam;
  const auto a = lhs<T>(), b = rhs<T>();
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x * y; }),
                             expected_binary<T>(a, b, [](T x, T y) { return x * y; })));
}

TYPED_TEST(NumericOps, Div) {
  using T = TypeParam;
  const auto a = lhs<T>(), b = rhs<T>();
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x / y; }),
                             expected_binary<T>(a, b, [](T x, T y) { return x / y; }), 1e-6));
}

TYPED_TEST(IntOps, DivTruncatesTowardZeroAndRemKeepsTheDividendsSign) {
  using T = TypeParam;
  const std::vector<T> a{-7, 7, -7, 7, 9, -9, 0, 1};
  const std::vector<T> b{2, -2, -2, 2, 4, 4, 3, 5};
  // By hand: C / XLA semantics (truncating division, remainder has the sign of the dividend).
  const std::vector<T> q{-3, -3, 3, 3, 2, -2, 0, 0};
  const std::vector<T> r{-1, 1, -1, 1, 1, -1, 0, 1};
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x / y; }), q));
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x % y; }), r));
}

TYPED_TEST(IntOps, Rem) {
  using T = TypeParam;
  const auto a = lhs<T>(), b = rhs<T>();
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x % y; }),
                             expected_binary<T>(a, b, [](T x, T y) { return x % y; })));
  // With a literal divisor.
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return x % 3; }),
                             expected_unary<T>(a, [](T x) { return x % 3; })));
}

TYPED_TEST(IntOps, MinDividedByMinusOneDoesNotTrap) {
  // INT_MIN / -1 overflows; on x86 a plain `a / b` traps (SIGFPE) and kills
  // the process. XLA defines the quotient as INT_MIN (two's complement
  // wrap-around) and the remainder as 0.
  using T = TypeParam;
  constexpr T lo = std::numeric_limits<T>::min();
  const std::vector<T> a{lo, lo, lo, 6, lo, 5, -5, lo};
  const std::vector<T> b{-1, 1, 2, -1, -1, -1, -1, lo};
  const std::vector<T> q{lo, lo, static_cast<T>(lo / 2), -6, lo, -5, 5, 1};
  const std::vector<T> r{0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x / y; }), q));
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x % y; }), r));
}

TYPED_TEST(IntOps, SignedOverflowWrapsAround) {
  // Two's complement wrap-around, as XLA defines integer overflow.
  using T = TypeParam;
  using U = std::make_unsigned_t<T>;
  constexpr T hi = std::numeric_limits<T>::max(), lo = std::numeric_limits<T>::min();
  const std::vector<T> a{hi, lo, hi, lo, 3, -3, hi, 0};
  const std::vector<T> b{1, 1, 2, -1, hi, hi, -1, lo};
  const auto wrap = [](U u) { return static_cast<T>(u); };
  std::vector<T> sum, diff, prod;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sum.push_back(wrap(static_cast<U>(static_cast<U>(a[i]) + static_cast<U>(b[i]))));
    diff.push_back(wrap(static_cast<U>(static_cast<U>(a[i]) - static_cast<U>(b[i]))));
    prod.push_back(wrap(static_cast<U>(static_cast<U>(a[i]) * static_cast<U>(b[i]))));
  }
  EXPECT_EQ(sum[0], lo);  // by hand: max + 1 wraps to min
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x + y; }), sum));
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x - y; }), diff));
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return x * y; }), prod));
  // -min and abs(min) wrap to min.
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return -x; }),
                             expected_unary<T>(a, [&](T x) { return wrap(static_cast<U>(U{0} - static_cast<U>(x))); })));
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return abs(x); }),
                             expected_unary<T>(a, [&](T x) { return x < 0 ? wrap(static_cast<U>(U{0} - static_cast<U>(x))) : x; })));
}

TYPED_TEST(FloatOps, DivisionByZeroFollowsIeee) {
  using T = TypeParam;
  const std::vector<T> a{1, -1, 0, 2, 3, 4, 5, 6};
  const std::vector<T> b{0, 0, 0, 4, 2, 8, 10, 3};
  const auto got = run_binary<T>(a, b, [](auto x, auto y) { return x / y; });
  EXPECT_EQ(got[0], std::numeric_limits<T>::infinity());
  EXPECT_EQ(got[1], -std::numeric_limits<T>::infinity());
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_EQ(got[3], T(0.5));
  EXPECT_EQ(got[4], T(1.5));
  EXPECT_EQ(got[5], T(0.5));
  EXPECT_EQ(got[6], T(0.5));
  EXPECT_EQ(got[7], T(2));
}

TYPED_TEST(NumericOps, MinMax) {
  using T = TypeParam;
  const auto a = lhs<T>(), b = rhs<T>();
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return refx::min(x, y); }),
                             expected_binary<T>(a, b, [](T x, T y) { return x < y ? x : y; })));
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return refx::max(x, y); }),
                             expected_binary<T>(a, b, [](T x, T y) { return x < y ? y : x; })));
  // With a literal on either side (relu and clamp).
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return refx::max(x, T(0)); }),
                             expected_unary<T>(a, [](T x) { return x < 0 ? T(0) : x; })));
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return refx::min(T(4), x); }),
                             expected_unary<T>(a, [](T x) { return x < 4 ? x : T(4); })));
}

TYPED_TEST(FloatOps, MinMaxPropagateNanFromEitherSide) {
  // XLA semantics: a NaN operand makes min / max NaN, whichever side it is on,
  // so both ops commute.
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> a{nan, 1, nan, -0.0f, 2, -3, 5, nan};
  const std::vector<T> b{1, nan, nan, nan, 3, -4, 5, -1};
  for (auto op : {0, 1}) {
    const auto ab = run_binary<T>(a, b, [op](auto x, auto y) { return op ? refx::max(x, y) : refx::min(x, y); });
    const auto ba = run_binary<T>(a, b, [op](auto x, auto y) { return op ? refx::max(y, x) : refx::min(y, x); });
    for (std::size_t i = 0; i < a.size(); ++i) {
      const bool any_nan = std::isnan(a[i]) || std::isnan(b[i]);
      EXPECT_EQ(std::isnan(ab[i]), any_nan) << (op ? "max" : "min") << " element " << i;
      EXPECT_EQ(std::isnan(ba[i]), any_nan) << (op ? "max" : "min") << " element " << i;
      if (!any_nan) {
        EXPECT_EQ(ab[i], ba[i]);
        EXPECT_EQ(ab[i], op ? std::max(a[i], b[i]) : std::min(a[i], b[i]));
      }
    }
  }
}

TYPED_TEST(FloatOps, AbsClearsTheSignOfNegativeZero) {
  using T = TypeParam;
  const std::vector<T> a{-0.0, 0.0, -1.5, 1.5, -std::numeric_limits<T>::infinity(), 3, -7, -0.25};
  const auto got = run_unary<T>(a, [](auto x) { return abs(x); });
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_FALSE(std::signbit(got[i])) << i;
    EXPECT_EQ(got[i], std::fabs(a[i])) << i;
  }
}

TYPED_TEST(NumericOps, NegAndAbs) {
  using T = TypeParam;
  const auto a = lhs<T>();
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return -x; }), expected_unary<T>(a, [](T x) { return -x; })));
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return abs(x); }),
                             expected_unary<T>(a, [](T x) { return x < 0 ? static_cast<T>(-x) : x; })));
  // By hand, for the first few.
  const auto got = run_unary<T>(a, [](auto x) { return abs(-x) + x; });
  EXPECT_EQ(got[0], T(0));                  // |-(-7)| + -7
  EXPECT_EQ(got[4], static_cast<T>(2 * a[4]));  // |-2| + 2
}

TYPED_TEST(FloatOps, ExpLogSqrt) {
  using T = TypeParam;
  const std::vector<T> pos{T(0.25), T(0.5), T(1), T(2), T(3.5), T(9), T(16), T(100)};
  const auto a = lhs<T>();
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return exp(x); }),
                             expected_unary<T>(a, [](T x) { return std::exp(x); }), tol));
  EXPECT_TRUE(elements_match(run_unary<T>(pos, [](auto x) { return log(x); }),
                             expected_unary<T>(pos, [](T x) { return std::log(x); }), tol));
  EXPECT_TRUE(elements_match(run_unary<T>(pos, [](auto x) { return sqrt(x); }),
                             expected_unary<T>(pos, [](T x) { return std::sqrt(x); }), tol));
  // By hand.
  const auto s = run_unary<T>(pos, [](auto x) { return sqrt(x); });
  EXPECT_EQ(s[0], T(0.5));
  EXPECT_EQ(s[5], T(3));
  EXPECT_EQ(s[6], T(4));
  EXPECT_EQ(s[7], T(10));
  const auto l = run_unary<T>(a, [](auto x) { return log(exp(x)); });  // exp(12.5) still fits a float
  EXPECT_TRUE(elements_match(l, a, tol * 10));
  const auto e = run_unary<T>(pos, [](auto x) { return exp(x * T(0)); });
  EXPECT_TRUE(elements_match(e, std::vector<T>(N, T(1))));
}

TYPED_TEST(FloatOps, SqrtAndLogOfNegativeAreNan) {
  using T = TypeParam;
  const std::vector<T> a{-1, -4, 0, 1, 4, 9, -0.5, 16};
  const auto s = run_unary<T>(a, [](auto x) { return sqrt(x); });
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_TRUE(std::isnan(s[1]));
  EXPECT_EQ(s[2], T(0));
  EXPECT_EQ(s[4], T(2));
  const auto l = run_unary<T>(a, [](auto x) { return log(x); });
  EXPECT_TRUE(std::isnan(l[0]));
  EXPECT_EQ(l[2], -std::numeric_limits<T>::infinity());
  EXPECT_EQ(l[3], T(0));
}

TYPED_TEST(NumericOps, Rank2Elementwise) {
  using T = TypeParam;
  Graph g = trace([](VmemRef<const T, 3, 4> x, VmemRef<const T, 3, 4> y, VmemRef<T, 3, 4> z) {
    auto a = x.load(), b = y.load();
    static_assert(std::is_same_v<decltype(a * b - a), Value<T, extents<3, 4>>>);
    z.store(a * b - a + refx::max(a, b));
  });
  Buffer bx = make_buffer_fn<T>(Shape{3, 4}, [](std::int64_t i) { return i - 5; });
  Buffer by = make_buffer_fn<T>(Shape{3, 4}, [](std::int64_t i) { return 2 * (i % 3) - 1; });
  Buffer bz(dtype_v<T>, Shape{3, 4});
  interpret(g, bx, by, bz);
  std::vector<T> want;
  for (std::int64_t i = 0; i < 12; ++i) {
    const T a = static_cast<T>(i - 5), b = static_cast<T>(2 * (i % 3) - 1);
    want.push_back(static_cast<T>(a * b - a + (a < b ? b : a)));
  }
  EXPECT_TRUE(elements_match(contents<T>(bz), want));
}

// ---------------------------------------------------------------- comparisons and logic

TYPED_TEST(NumericOps, Comparisons) {
  using T = TypeParam;
  auto a = lhs<T>(), b = rhs<T>();
  // Make some elements equal so == and <= / >= see ties.
  b[2] = a[2];
  b[5] = a[5];
  auto check = [&](auto op_traced, auto op_plain) {
    EXPECT_TRUE(elements_match(run_binary<bool>(a, b, op_traced), expected_binary<bool>(a, b, op_plain)));
  };
  check([](auto x, auto y) { return x == y; }, [](T x, T y) { return x == y; });
  check([](auto x, auto y) { return x != y; }, [](T x, T y) { return x != y; });
  check([](auto x, auto y) { return x < y; }, [](T x, T y) { return x < y; });
  check([](auto x, auto y) { return x <= y; }, [](T x, T y) { return x <= y; });
  check([](auto x, auto y) { return x > y; }, [](T x, T y) { return x > y; });
  check([](auto x, auto y) { return x >= y; }, [](T x, T y) { return x >= y; });
  // Literal on either side.
  EXPECT_TRUE(elements_match(run_unary<bool>(a, [](auto x) { return x > T(0); }),
                             expected_unary<bool>(a, [](T x) { return x > T(0); })));
  EXPECT_TRUE(elements_match(run_unary<bool>(a, [](auto x) { return T(2) <= x; }),
                             expected_unary<bool>(a, [](T x) { return T(2) <= x; })));
  // By hand: a = {-7, -3, -1, 0, 2, 5, 9, 12} (+0.5 for floats) vs zero.
  const auto ge0 = run_unary<bool>(a, [](auto x) { return x >= T(0); });
  const std::vector<bool> want_ge0{false, false, false, true, true, true, true, true};
  EXPECT_EQ(ge0, want_ge0);
}

TEST(BoolOps, AndOrNotEqNe) {
  const std::vector<bool> a{false, false, true, true, false, true, true, false};
  const std::vector<bool> b{false, true, false, true, true, true, false, false};
  const std::vector<bool> want_and{false, false, false, true, false, true, false, false};
  const std::vector<bool> want_or{false, true, true, true, true, true, true, false};
  const std::vector<bool> want_not{true, true, false, false, true, false, false, true};
  const std::vector<bool> want_eq{true, false, false, true, false, true, false, true};
  EXPECT_EQ(run_binary<bool>(a, b, [](auto x, auto y) { return x & y; }), want_and);
  EXPECT_EQ(run_binary<bool>(a, b, [](auto x, auto y) { return x | y; }), want_or);
  EXPECT_EQ(run_unary<bool>(a, [](auto x) { return !x; }), want_not);
  EXPECT_EQ(run_binary<bool>(a, b, [](auto x, auto y) { return x == y; }), want_eq);
  const std::vector<bool> want_ne{false, true, true, false, true, false, true, false};
  EXPECT_EQ(run_binary<bool>(a, b, [](auto x, auto y) { return x != y; }), want_ne);
  // With literals: x & true == x, x | false == x, x | true == all true.
  EXPECT_EQ(run_unary<bool>(a, [](auto x) { return x & true; }), a);
  EXPECT_EQ(run_unary<bool>(a, [](auto x) { return false | x; }), a);
  EXPECT_EQ(run_unary<bool>(a, [](auto x) { return x | true; }), std::vector<bool>(N, true));
  // De Morgan.
  EXPECT_EQ(run_binary<bool>(a, b, [](auto x, auto y) { return !(x & y); }),
            run_binary<bool>(a, b, [](auto x, auto y) { return (!x) | (!y); }));
}

TEST(BoolOps, CombinedComparisons) {
  // 0 <= x < 5, computed from comparisons combined with & and |.
  const std::vector<std::int32_t> a{-2, 0, 1, 4, 5, 7, 3, -1};
  std::vector<bool> in_range, outside;
  for (auto x : a) {
    in_range.push_back(x >= 0 && x < 5);
    outside.push_back(x < 0 || x >= 5);
  }
  EXPECT_EQ(run_unary<bool>(a, [](auto x) { return (x >= 0) & (x < 5); }), in_range);
  EXPECT_EQ(run_unary<bool>(a, [](auto x) { return (x < 0) | (x >= 5); }), outside);
  EXPECT_EQ(run_unary<bool>(a, [](auto x) { return !((x >= 0) & (x < 5)); }), outside);
}

TEST(BoolOps, NumericOpsOnBoolAreTraceErrors) {
  auto neg = [] { trace([](VmemRef<const bool, 4> x, VmemRef<bool, 4> y) { y.store(-x.load()); }); };
  EXPECT_TRUE(throws_with<TraceError>(neg, {"neg", "bool"}));
  auto lt = [] { trace([](VmemRef<const bool, 4> x, VmemRef<bool, 4> y) { y.store(x.load() < x.load()); }); };
  EXPECT_TRUE(throws_with<TraceError>(lt, {"lt", "bool"}));
  auto mx = [] { trace([](VmemRef<const bool, 4> x, VmemRef<bool, 4> y) { y.store(refx::max(x.load(), x.load())); }); };
  EXPECT_TRUE(throws_with<TraceError>(mx, {"max", "bool"}));
}

// ---------------------------------------------------------------- select

TYPED_TEST(NumericOps, Select) {
  using T = TypeParam;
  const auto a = lhs<T>(), b = rhs<T>();
  // select(x > y, x, y) is max.
  EXPECT_TRUE(elements_match(run_binary<T>(a, b, [](auto x, auto y) { return select(x > y, x, y); }),
                             expected_binary<T>(a, b, [](T x, T y) { return x > y ? x : y; })));
  // A scalar (literal) branch is broadcast: relu.
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return select(x > T(0), x, T(0)); }),
                             expected_unary<T>(a, [](T x) { return x > 0 ? x : T(0); })));
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return select(x > T(0), T(-1), x); }),
                             expected_unary<T>(a, [](T x) { return x > 0 ? T(-1) : x; })));
  // Both branches literals: the sign.
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return select(x < T(0), T(-1), T(1)); }),
                             expected_unary<T>(a, [](T x) { return x < 0 ? T(-1) : T(1); })));
}

TYPED_TEST(NumericOps, SelectWithScalarCondition) {
  using T = TypeParam;
  // The condition is a traced scalar (from a rank-0 Ref), broadcast over the branches.
  Graph g = trace([](VmemRef<const std::int32_t> flag, VmemRef<const T, N> x, VmemRef<const T, N> y, VmemRef<T, N> z) {
    z.store(select(flag.load() != 0, x.load(), y.load()));
  });
  const auto a = lhs<T>(), b = rhs<T>();
  for (std::int32_t f : {0, 1, 7}) {
    Buffer bf = Buffer::scalar<std::int32_t>(f), bx = make_buffer<T>(Shape{N}, a), by = make_buffer<T>(Shape{N}, b);
    Buffer bz(dtype_v<T>, Shape{N});
    interpret(g, bf, bx, by, bz);
    EXPECT_TRUE(elements_match(contents<T>(bz), f != 0 ? a : b)) << "flag " << f;
  }
}

TEST(BoolOps, SelectOverBoolValues) {
  const std::vector<bool> c{true, false, true, false, true, false, true, false};
  const std::vector<bool> a{true, true, false, false, true, true, false, false};
  Graph g = trace([](VmemRef<const bool, N> cond, VmemRef<const bool, N> x, VmemRef<bool, N> z) {
    z.store(select(cond.load(), x.load(), !x.load()));
  });
  Buffer bc = make_buffer<bool>(Shape{N}, c), bx = make_buffer<bool>(Shape{N}, a), bz(DType::pred, Shape{N});
  interpret(g, bc, bx, bz);
  std::vector<bool> want;
  for (std::size_t i = 0; i < c.size(); ++i) want.push_back(c[i] ? a[i] : !a[i]);
  EXPECT_EQ(contents<bool>(bz), want);
}

// The element kernel blends bit patterns through a mask from the condition:
// NaN payloads, signed zeros and denormals come out as they went in, for a
// 4-byte and a 2-byte element type, over more elements than a vector holds
// and a tail.
template <class T, class U>
void select_keeps_bits(const std::vector<U>& patterns) {
  constexpr std::int64_t n = 67;
  std::vector<T> a, b;
  std::vector<bool> c;
  for (std::int64_t i = 0; i < n; ++i) {
    a.push_back(std::bit_cast<T>(patterns[std::size_t(i) % patterns.size()]));
    b.push_back(std::bit_cast<T>(patterns[std::size_t(i * 5 + 1) % patterns.size()]));
    c.push_back(i % 3 != 1);
  }
  Graph g = trace([](VmemRef<const bool, n> cond, VmemRef<const T, n> x, VmemRef<const T, n> y, VmemRef<T, n> z) {
    z.store(select(cond.load(), x.load(), y.load()));
  });
  Buffer bc = make_buffer<bool>(Shape{n}, c), bx = make_buffer<T>(Shape{n}, a), by = make_buffer<T>(Shape{n}, b);
  Buffer bz(dtype_v<T>, Shape{n});
  interpret(g, bc, bx, by, bz);
  const std::vector<T> z = contents<T>(bz);
  for (std::size_t i = 0; i < z.size(); ++i)
    ASSERT_EQ(std::bit_cast<U>(z[i]), std::bit_cast<U>(c[i] ? a[i] : b[i])) << i;
}

TEST(Select, KeepsEveryBitPattern) {
  select_keeps_bits<float, std::uint32_t>({0x7fc00001u, 0xffc12345u, 0x7f800001u, 0x80000000u, 0x00000000u,
                                           0x00000001u, 0x807fffffu, 0x7f800000u, 0x3f800000u, 0xbf7fffffu});
  select_keeps_bits<bf16, std::uint16_t>({0x7fc1, 0xff81, 0x8000, 0x0000, 0x0001, 0x807f, 0x7f80, 0x3f80, 0xc2f7});
}

// ---------------------------------------------------------------- scalar broadcast

TYPED_TEST(NumericOps, LiteralBroadcast) {
  using T = TypeParam;
  const auto a = lhs<T>();
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return x * T(2); }), expected_unary<T>(a, [](T x) { return x * 2; })));
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return T(3) * x; }), expected_unary<T>(a, [](T x) { return 3 * x; })));
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return x - T(1); }), expected_unary<T>(a, [](T x) { return x - 1; })));
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return T(10) - x; }), expected_unary<T>(a, [](T x) { return 10 - x; })));
  EXPECT_TRUE(elements_match(run_unary<T>(a, [](auto x) { return T(100) / (x * x + T(1)); }),
                             expected_unary<T>(a, [](T x) { return T(100) / static_cast<T>(x * x + 1); }), 1e-6));
}

TEST(ScalarBroadcast, FloatLiteralTimesValue) {
  // The exact spelling from the docs: v * 2.0f.
  const std::vector<float> a{1.5f, -2.0f, 0.0f, 3.25f, 8.0f, -0.5f, 7.0f, 100.0f};
  const auto got = run_unary<float>(a, [](auto v) { return v * 2.0f; });
  const std::vector<float> want{3.0f, -4.0f, 0.0f, 6.5f, 16.0f, -1.0f, 14.0f, 200.0f};
  EXPECT_TRUE(elements_match(got, want));
}

// A Value whose extents are only known at trace time (`dyn`) combined with a
// scalar: `x.load() * 2.0f` for a Ref<float, extents<dyn>>, or any slice made
// with ds(start, size). (This once failed to compile: binary_extents formed
// merge_extents_t<E, extents<>> eagerly.)
TEST(ScalarBroadcast, DynamicExtentValueWithScalar) {
  Graph g = trace(
      [](Ref<const float, extents<dyn>> x, Ref<const bool, extents<dyn>> c, Ref<float, extents<dyn>> y,
         Ref<float, extents<dyn>> z, VmemRef<float, 3> w) {
        y.store(x.load() * 2.0f + 1.0f);
        z.store(select(c.load(), x.load(), 0.0f));
        w.store(x.at(ds(1, 3)).load() - Scalar<float>(1.0f));
      },
      {Shape{5}, Shape{5}, Shape{5}, Shape{5}, Shape{3}});
  Buffer bx = make_buffer<float>(Shape{5}, {1, -2, 3, -4, 5});
  Buffer bc = make_buffer<bool>(Shape{5}, {true, false, false, true, true});
  Buffer by(DType::f32, Shape{5}), bz(DType::f32, Shape{5}), bw(DType::f32, Shape{3});
  interpret(g, bx, bc, by, bz, bw);
  EXPECT_EQ(contents<float>(by), (std::vector<float>{3, -3, 7, -7, 11}));
  EXPECT_EQ(contents<float>(bz), (std::vector<float>{1, 0, 0, -4, 5}));
  EXPECT_EQ(contents<float>(bw), (std::vector<float>{-3, 2, -5}));
}

TYPED_TEST(NumericOps, ScalarValueBroadcast) {
  using T = TypeParam;
  // Scalars read from a rank-0 Ref, and scalar Values built from literals.
  Graph g = trace([](VmemRef<const T> s, VmemRef<const T, N> x, VmemRef<T, N> y, VmemRef<T, N> z, VmemRef<T> w) {
    Scalar<T> k = s.load();
    Scalar<T> two = T(2);
    static_assert(std::is_same_v<decltype(k * x.load()), Value<T, extents<N>>>);
    static_assert(std::is_same_v<decltype(k * two), Scalar<T>>);
    y.store(k * x.load() + two);
    z.store(x.load() - k);
    w.store(k * two + T(1));
  });
  const auto a = lhs<T>();
  const T k = static_cast<T>(3);
  Buffer bs = Buffer::scalar<T>(k), bx = make_buffer<T>(Shape{N}, a), by(dtype_v<T>, Shape{N}), bz(dtype_v<T>, Shape{N}),
         bw(dtype_v<T>, Shape{});
  interpret(g, bs, bx, by, bz, bw);
  EXPECT_TRUE(elements_match(contents<T>(by), expected_unary<T>(a, [&](T x) { return k * x + 2; })));
  EXPECT_TRUE(elements_match(contents<T>(bz), expected_unary<T>(a, [&](T x) { return x - k; })));
  EXPECT_EQ(contents<T>(bw)[0], T(7));  // 3 * 2 + 1
}

TYPED_TEST(NumericOps, ExplicitBroadcastAndStoreOfScalar) {
  using T = TypeParam;
  Graph g = trace([](VmemRef<const T> s, VmemRef<T, 2, 3> y, VmemRef<T, 4> z) {
    auto b = broadcast(s.load(), TypedShape<extents<2, 3>>{Shape{2, 3}});
    static_assert(std::is_same_v<decltype(b), Value<T, extents<2, 3>>>);
    y.store(b + T(1));
    z.store(s.load());  // a scalar Value stored into a rank-1 Ref is broadcast
    z.at(ds(1, 2)).store(T(5));  // and so is a literal
  });
  Buffer bs = Buffer::scalar<T>(T(4)), by(dtype_v<T>, Shape{2, 3}), bz(dtype_v<T>, Shape{4});
  interpret(g, bs, by, bz);
  EXPECT_TRUE(elements_match(contents<T>(by), std::vector<T>(6, T(5))));
  EXPECT_TRUE(elements_match(contents<T>(bz), std::vector<T>{4, 5, 5, 4}));
}

// ---------------------------------------------------------------- cast

TEST(Cast, FloatToIntTruncatesTowardZero) {
  const std::vector<float> a{-2.7f, -0.5f, 0.0f, 1.9f, 3.5f, 100.25f, -100.75f, 7.0f};
  const std::vector<std::int32_t> want{-2, 0, 0, 1, 3, 100, -100, 7};
  EXPECT_EQ(run_unary<std::int32_t>(a, [](auto x) { return cast<std::int32_t>(x); }), want);
  const std::vector<std::int64_t> want64{-2, 0, 0, 1, 3, 100, -100, 7};
  EXPECT_EQ(run_unary<std::int64_t>(a, [](auto x) { return cast<std::int64_t>(x); }), want64);
}

TEST(Cast, FloatToIntSaturatesAndNanIsZero) {
  // XLA's conversion: round toward zero, clamp to the target's range, NaN -> 0.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a{nan, inf, -inf, 3e9f, -3e9f, 2147483520.0f, -2147483648.0f, 1e30f};
  constexpr std::int32_t hi = std::numeric_limits<std::int32_t>::max(), lo = std::numeric_limits<std::int32_t>::min();
  const std::vector<std::int32_t> want{0, hi, lo, hi, lo, 2147483520, lo, hi};
  EXPECT_EQ(run_unary<std::int32_t>(a, [](auto x) { return cast<std::int32_t>(x); }), want);
  const std::vector<double> d{std::nan(""), 1e300, -1e300, 9.3e18, -9.3e18, 4e9, -4e9, 2147483647.9};
  constexpr std::int64_t hi64 = std::numeric_limits<std::int64_t>::max(), lo64 = std::numeric_limits<std::int64_t>::min();
  const std::vector<std::int64_t> want64{0, hi64, lo64, hi64, lo64, 4000000000LL, -4000000000LL, 2147483647};
  EXPECT_EQ(run_unary<std::int64_t>(d, [](auto x) { return cast<std::int64_t>(x); }), want64);
  const std::vector<std::int32_t> want32{0, hi, lo, hi, lo, hi, lo, hi};
  EXPECT_EQ(run_unary<std::int32_t>(d, [](auto x) { return cast<std::int32_t>(x); }), want32);
}

TEST(Cast, IntToFloatAndDouble) {
  const std::vector<std::int32_t> a{-3, 0, 1, 2, 1 << 20, -(1 << 20), 123456, 7};
  EXPECT_TRUE(elements_match(run_unary<float>(a, [](auto x) { return cast<float>(x); }),
                             std::vector<float>{-3.f, 0.f, 1.f, 2.f, 1048576.f, -1048576.f, 123456.f, 7.f}));
  EXPECT_TRUE(elements_match(run_unary<double>(a, [](auto x) { return cast<double>(x); }),
                             std::vector<double>{-3, 0, 1, 2, 1048576, -1048576, 123456, 7}));
  // Integer arithmetic after a cast: 7 / 2 as float is 3.5.
  const auto half = run_unary<float>(a, [](auto x) { return cast<float>(x) / 2.0f; });
  EXPECT_EQ(half[7], 3.5f);
  EXPECT_EQ(half[0], -1.5f);
}

TEST(Cast, BetweenIntegerWidths) {
  const std::int64_t big = (std::int64_t{1} << 32) + 5;
  const std::vector<std::int64_t> a{-1, 0, 1, big, -big, 2147483647, -2147483648LL, 42};
  // int64 -> int32 keeps the low 32 bits (modular, as in C++20 and XLA).
  const std::vector<std::int32_t> want{-1, 0, 1, 5, -5, 2147483647, -2147483647 - 1, 42};
  EXPECT_EQ(run_unary<std::int32_t>(a, [](auto x) { return cast<std::int32_t>(x); }), want);
  const std::vector<std::int32_t> b{-1, 0, 1, 5, -5, 2147483647, -2147483647 - 1, 42};
  const std::vector<std::int64_t> want64{-1, 0, 1, 5, -5, 2147483647, -2147483648LL, 42};
  EXPECT_EQ(run_unary<std::int64_t>(b, [](auto x) { return cast<std::int64_t>(x); }), want64);
}

TEST(Cast, ToAndFromBool) {
  const std::vector<float> a{0.0f, -0.0f, 1.0f, -2.5f, 0.25f, 0.0f, 1e-30f, 3.0f};
  const std::vector<bool> nonzero{false, false, true, true, true, false, true, true};
  EXPECT_EQ(run_unary<bool>(a, [](auto x) { return cast<bool>(x); }), nonzero);
  const std::vector<std::int32_t> ints{0, 1, -1, 2, 0, 0, 7, -100};
  const std::vector<bool> nz_int{false, true, true, true, false, false, true, true};
  EXPECT_EQ(run_unary<bool>(ints, [](auto x) { return cast<bool>(x); }), nz_int);
  const std::vector<bool> bits{true, false, true, true, false, false, true, false};
  EXPECT_EQ(run_unary<std::int32_t>(bits, [](auto x) { return cast<std::int32_t>(x); }),
            (std::vector<std::int32_t>{1, 0, 1, 1, 0, 0, 1, 0}));
  EXPECT_TRUE(elements_match(run_unary<double>(bits, [](auto x) { return cast<double>(x); }),
                             std::vector<double>{1, 0, 1, 1, 0, 0, 1, 0}));
  // Counting trues with a cast and a reduction.
  Graph g = trace([](VmemRef<const bool, N> x, VmemRef<std::int32_t> n) { n.store(reduce_sum<0>(cast<std::int32_t>(x.load()))); });
  Buffer bx = make_buffer<bool>(Shape{N}, bits), bn(DType::i32, Shape{});
  interpret(g, bx, bn);
  EXPECT_EQ(contents<std::int32_t>(bn)[0], 4);
}

TEST(Cast, DoubleToFloatRoundsAndFloatToDoubleIsExact) {
  const std::vector<double> a{0.1, 1.0 / 3.0, -2.5, 1e10, 0.0, 3.0, -1e-3, 16777217.0};
  std::vector<float> want;
  for (double x : a) want.push_back(static_cast<float>(x));
  EXPECT_TRUE(elements_match(run_unary<float>(a, [](auto x) { return cast<float>(x); }), want));
  EXPECT_EQ(run_unary<float>(a, [](auto x) { return cast<float>(x); })[7], 16777216.0f);  // 2^24 + 1 rounds to even
  const std::vector<float> f{0.1f, 0.5f, -3.75f, 1e10f, 0.0f, 3.0f, -1e-3f, 7.0f};
  std::vector<double> wantd;
  for (float x : f) wantd.push_back(static_cast<double>(x));
  EXPECT_TRUE(elements_match(run_unary<double>(f, [](auto x) { return cast<double>(x); }), wantd));
}

TEST(Cast, IdentityCastKeepsValues) {
  const auto a = lhs<double>();
  EXPECT_TRUE(elements_match(run_unary<double>(a, [](auto x) { return cast<double>(x); }), a));
}

// ---------------------------------------------------------------- iota, full, zeros

TYPED_TEST(NumericOps, IotaAlongEachDimension) {
  using T = TypeParam;
  Graph g = trace([](VmemRef<T, 2, 3, 4> d0, VmemRef<T, 2, 3, 4> d1, VmemRef<T, 2, 3, 4> d2, VmemRef<T, 5> flat) {
    d0.store(iota<T, 2, 3, 4>(0));
    d1.store(iota<T, 2, 3, 4>(1));
    d2.store(iota<T>(d2.typed_shape(), 2));
    flat.store(iota<T, 5>(0));
  });
  Buffer b0(dtype_v<T>, Shape{2, 3, 4}), b1(dtype_v<T>, Shape{2, 3, 4}), b2(dtype_v<T>, Shape{2, 3, 4}), bf(dtype_v<T>, Shape{5});
  interpret(g, b0, b1, b2, bf);
  std::vector<T> w0, w1, w2;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        w0.push_back(static_cast<T>(i));
        w1.push_back(static_cast<T>(j));
        w2.push_back(static_cast<T>(k));
      }
  EXPECT_TRUE(elements_match(contents<T>(b0), w0));
  EXPECT_TRUE(elements_match(contents<T>(b1), w1));
  EXPECT_TRUE(elements_match(contents<T>(b2), w2));
  EXPECT_TRUE(elements_match(contents<T>(bf), std::vector<T>{0, 1, 2, 3, 4}));
}

TEST(Iota, OfBoolAndOutOfRangeDimensionAreTraceErrors) {
  EXPECT_TRUE(throws_with<TraceError>([] { trace([](VmemRef<bool, 4> y) { y.store(iota<bool, 4>(0)); }); }, {"iota", "numeric"}));
  EXPECT_TRUE(throws_with<TraceError>([] { trace([](VmemRef<float, 2, 3> y) { y.store(iota<float, 2, 3>(2)); }); },
                                      {"iota", "dimension 2"}));
}

TYPED_TEST(NumericOps, FullAndZeros) {
  using T = TypeParam;
  Graph g = trace(
      [](VmemRef<T, 3, 4> f, VmemRef<T, 2, 2> z, Ref<T, extents<dyn, 2>> d) {
        f.store(full<T, 3, 4>(T(7)));
        z.store(zeros<T, 2, 2>() + T(0));
        d.store(full<T>(d.typed_shape(), T(-3)) * zeros<T>(d.typed_shape()) + full<T>(d.typed_shape(), T(2)));
      },
      {Shape{3, 4}, Shape{2, 2}, Shape{5, 2}});
  Buffer bf = make_buffer_fn<T>(Shape{3, 4}, [](std::int64_t) { return 1; });
  Buffer bz = make_buffer_fn<T>(Shape{2, 2}, [](std::int64_t) { return 1; });
  Buffer bd = make_buffer_fn<T>(Shape{5, 2}, [](std::int64_t) { return 1; });
  interpret(g, bf, bz, bd);
  EXPECT_TRUE(elements_match(contents<T>(bf), std::vector<T>(12, T(7))));
  EXPECT_TRUE(elements_match(contents<T>(bz), std::vector<T>(4, T(0))));
  EXPECT_TRUE(elements_match(contents<T>(bd), std::vector<T>(10, T(2))));
}

TEST(FullAndZeros, BoolAndFractionalValues) {
  Graph g = trace([](VmemRef<bool, 3> t, VmemRef<bool, 3> f, VmemRef<double, 2> d, VmemRef<float, 2> h) {
    t.store(full<bool, 3>(true));
    f.store(zeros<bool, 3>());
    d.store(full<double, 2>(0.1));
    h.store(full<float, 2>(0.1f));
  });
  Buffer bt(DType::pred, Shape{3}), bf = make_buffer<bool>(Shape{3}, {true, true, true}), bd(DType::f64, Shape{2}),
      bh(DType::f32, Shape{2});
  interpret(g, bt, bf, bd, bh);
  EXPECT_EQ(contents<bool>(bt), std::vector<bool>(3, true));
  EXPECT_EQ(contents<bool>(bf), std::vector<bool>(3, false));
  EXPECT_EQ(contents<double>(bd), std::vector<double>(2, 0.1));  // the literal is carried exactly
  EXPECT_EQ(contents<float>(bh), std::vector<float>(2, 0.1f));
}

TEST(FullAndZeros, LargeIntegerLiteralsAreExact) {
  // 2^53 + 1 is not representable as a double; an int64 constant must not pass through one.
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  Graph g = trace([&](VmemRef<std::int64_t, 2> y, VmemRef<std::int64_t> s) {
    y.store(full<std::int64_t, 2>(big));
    s.store(Scalar<std::int64_t>(std::numeric_limits<std::int64_t>::min()) + 1);
  });
  Buffer by(DType::i64, Shape{2}), bs(DType::i64, Shape{});
  interpret(g, by, bs);
  EXPECT_EQ(contents<std::int64_t>(by), std::vector<std::int64_t>(2, big));
  EXPECT_EQ(contents<std::int64_t>(bs)[0], std::numeric_limits<std::int64_t>::min() + 1);
}

// ---------------------------------------------------------------- reductions

template <class T>
T reduction_input(std::int64_t i) {
  // Values in [-9, 1]: several slices are entirely negative, so reduce_max
  // must not start from zero.
  return static_cast<T>(((i * 7) % 11) - 9);
}

TYPED_TEST(NumericOps, ReduceSumAndMaxAlongEachAxisOfRank3) {
  using T = TypeParam;
  constexpr std::int64_t A = 2, B = 3, C = 4;
  Graph g = trace([](VmemRef<const T, A, B, C> x, VmemRef<T, B, C> s0, VmemRef<T, A, C> s1, VmemRef<T, A, B> s2,
                     VmemRef<T, B, C> m0, VmemRef<T, A, C> m1, VmemRef<T, A, B> m2) {
    auto v = x.load();
    static_assert(std::is_same_v<decltype(reduce_sum<0>(v)), Value<T, extents<B, C>>>);
    static_assert(std::is_same_v<decltype(reduce_max<1>(v)), Value<T, extents<A, C>>>);
    static_assert(std::is_same_v<decltype(reduce_sum<2>(v)), Value<T, extents<A, B>>>);
    s0.store(reduce_sum<0>(v));
    s1.store(reduce_sum<1>(v));
    s2.store(reduce_sum<2>(v));
    m0.store(reduce_max<0>(v));
    m1.store(reduce_max<1>(v));
    m2.store(reduce_max<2>(v));
  });
  Buffer bx = make_buffer_fn<T>(Shape{A, B, C}, [](std::int64_t i) { return reduction_input<T>(i); });
  Buffer s0(dtype_v<T>, Shape{B, C}), s1(dtype_v<T>, Shape{A, C}), s2(dtype_v<T>, Shape{A, B});
  Buffer m0(dtype_v<T>, Shape{B, C}), m1(dtype_v<T>, Shape{A, C}), m2(dtype_v<T>, Shape{A, B});
  interpret(g, bx, s0, s1, s2, m0, m1, m2);

  auto at = [](std::int64_t i, std::int64_t j, std::int64_t k) { return reduction_input<T>((i * B + j) * C + k); };
  std::vector<T> ws0(B * C, T(0)), ws1(A * C, T(0)), ws2(A * B, T(0));
  std::vector<T> wm0(B * C, std::numeric_limits<T>::lowest()), wm1(A * C, std::numeric_limits<T>::lowest()),
      wm2(A * B, std::numeric_limits<T>::lowest());
  for (std::int64_t i = 0; i < A; ++i)
    for (std::int64_t j = 0; j < B; ++j)
      for (std::int64_t k = 0; k < C; ++k) {
        const T v = at(i, j, k);
        auto idx = [](std::int64_t r, std::int64_t c, std::int64_t cols) { return static_cast<std::size_t>(r * cols + c); };
        ws0[idx(j, k, C)] += v;
        ws1[idx(i, k, C)] += v;
        ws2[idx(i, j, B)] += v;
        wm0[idx(j, k, C)] = std::max(wm0[idx(j, k, C)], v);
        wm1[idx(i, k, C)] = std::max(wm1[idx(i, k, C)], v);
        wm2[idx(i, j, B)] = std::max(wm2[idx(i, j, B)], v);
      }
  EXPECT_TRUE(elements_match(contents<T>(s0), ws0));
  EXPECT_TRUE(elements_match(contents<T>(s1), ws1));
  EXPECT_TRUE(elements_match(contents<T>(s2), ws2));
  EXPECT_TRUE(elements_match(contents<T>(m0), wm0));
  EXPECT_TRUE(elements_match(contents<T>(m1), wm1));
  EXPECT_TRUE(elements_match(contents<T>(m2), wm2));
  // The input has all-negative slices, so some maxima are negative.
  bool some_negative = false;
  for (T m : contents<T>(m2)) some_negative |= m < T(0);
  EXPECT_TRUE(some_negative);
}

TEST(Reductions, ByHand) {
  // x = [[1, -2, 3], [-4, 5, -6]]
  Graph g = trace([](VmemRef<const float, 2, 3> x, VmemRef<float, 3> cols, VmemRef<float, 2> rows, VmemRef<float, 2> mx,
                     VmemRef<float> total) {
    auto v = x.load();
    cols.store(reduce_sum<0>(v));
    rows.store(reduce_sum<1>(v));
    mx.store(reduce_max<1>(v));
    total.store(reduce_sum<0>(reduce_sum<0>(v)));
  });
  Buffer bx = make_buffer<float>(Shape{2, 3}, {1, -2, 3, -4, 5, -6}), bc(DType::f32, Shape{3}), br(DType::f32, Shape{2}),
         bm(DType::f32, Shape{2}), bt(DType::f32, Shape{});
  interpret(g, bx, bc, br, bm, bt);
  EXPECT_EQ(contents<float>(bc), (std::vector<float>{-3, 3, -3}));
  EXPECT_EQ(contents<float>(br), (std::vector<float>{2, -5}));
  EXPECT_EQ(contents<float>(bm), (std::vector<float>{3, 5}));
  EXPECT_EQ(contents<float>(bt)[0], -3.0f);
}

TYPED_TEST(FloatOps, ReduceMaxPropagatesNanAndReduceOverEmptyAxisGivesTheIdentity) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  Graph g = trace([](VmemRef<const T, 3, 2> x, VmemRef<T, 3> mx, VmemRef<T, 2> mx0, VmemRef<T, 3> sum) {
    mx.store(reduce_max<1>(x.load()));
    mx0.store(reduce_max<0>(x.load()));
    sum.store(reduce_sum<1>(x.load()));
  });
  // Rows: [NaN, 1], [2, NaN], [-5, -6].
  Buffer bx = make_buffer<T>(Shape{3, 2}, {nan, 1, 2, nan, -5, -6}), bm(dtype_v<T>, Shape{3}), bm0(dtype_v<T>, Shape{2}),
         bs(dtype_v<T>, Shape{3});
  interpret(g, bx, bm, bm0, bs);
  const auto m = contents<T>(bm), m0 = contents<T>(bm0), su = contents<T>(bs);
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_TRUE(std::isnan(m[1]));
  EXPECT_EQ(m[2], T(-5));
  EXPECT_TRUE(std::isnan(m0[0]));
  EXPECT_TRUE(std::isnan(m0[1]));
  EXPECT_TRUE(std::isnan(su[0]));
  EXPECT_EQ(su[2], T(-11));

  // Over an empty axis: the sum is 0 and the max is -inf (the identity of max).
  Graph e = trace([](VmemRef<const T, 0, 3> x, VmemRef<T, 3> mx, VmemRef<T, 3> sum) {
    mx.store(reduce_max<0>(x.load()));
    sum.store(reduce_sum<0>(x.load()));
  });
  Buffer be(dtype_v<T>, Shape{0, 3}), bem = make_buffer<T>(Shape{3}, {1, 1, 1}), bes = make_buffer<T>(Shape{3}, {1, 1, 1});
  interpret(e, be, bem, bes);
  EXPECT_EQ(contents<T>(bem), std::vector<T>(3, -std::numeric_limits<T>::infinity()));
  EXPECT_EQ(contents<T>(bes), std::vector<T>(3, T(0)));
}

TYPED_TEST(IntOps, ReduceOverEmptyAxisAndWrappingSums) {
  using T = TypeParam;
  using U = std::make_unsigned_t<T>;
  constexpr T hi = std::numeric_limits<T>::max(), lo = std::numeric_limits<T>::min();
  Graph e = trace([](VmemRef<const T, 2, 0> x, VmemRef<T, 2> mx, VmemRef<T, 2> sum) {
    mx.store(reduce_max<1>(x.load()));
    sum.store(reduce_sum<1>(x.load()));
  });
  Buffer be(dtype_v<T>, Shape{2, 0}), bem(dtype_v<T>, Shape{2}), bes(dtype_v<T>, Shape{2});
  interpret(e, be, bem, bes);
  EXPECT_EQ(contents<T>(bem), std::vector<T>(2, lo));  // no -inf for integers: the lowest value
  EXPECT_EQ(contents<T>(bes), std::vector<T>(2, T(0)));

  // Sums, dots and accumulations that overflow wrap around.
  Graph g = trace([](VmemRef<const T, 1, 3> x, VmemRef<T, 1> s, VmemRef<T, 1, 1> d, VmemRef<T, 3> acc) {
    s.store(reduce_sum<1>(x.load()));
    d.store(dot(x.load(), full<T, 3, 1>(T(2))));
    acc += x.at(0).load();
  });
  Buffer bx = make_buffer<T>(Shape{1, 3}, {hi, hi, 3}), bs(dtype_v<T>, Shape{1}), bd(dtype_v<T>, Shape{1, 1});
  Buffer bacc = make_buffer<T>(Shape{3}, {1, lo, -4});
  interpret(g, bx, bs, bd, bacc);
  const auto w = [](U u) { return static_cast<T>(u); };
  const T sum = w(static_cast<U>(static_cast<U>(hi) + static_cast<U>(hi) + U{3}));
  EXPECT_EQ(sum, T(1));  // by hand: 2 * max + 3 = 2^n + 1 = 1 (mod 2^n)
  EXPECT_EQ(contents<T>(bs)[0], sum);
  EXPECT_EQ(contents<T>(bd)[0], w(static_cast<U>(U{2} * static_cast<U>(sum - 3) + U{6})));
  EXPECT_EQ(contents<T>(bacc), (std::vector<T>{lo, static_cast<T>(lo + hi), -1}));  // max + 1 wraps to min
}

TEST(Reductions, OfBoolIsATraceError) {
  EXPECT_TRUE(throws_with<TraceError>([] { trace([](VmemRef<const bool, 4> x, VmemRef<bool> y) { y.store(reduce_max<0>(x.load())); }); },
                                      {"reduce_max", "bool"}));
}

// ---------------------------------------------------------------- dot

TYPED_TEST(NumericOps, DotNonSquare) {
  using T = TypeParam;
  constexpr std::int64_t M = 3, K = 5, Nn = 4;
  Graph g = trace([](VmemRef<const T, M, K> a, VmemRef<const T, K, Nn> b, VmemRef<T, M, Nn> c) {
    auto p = dot(a.load(), b.load());
    static_assert(std::is_same_v<decltype(p), Value<T, extents<M, Nn>>>);
    c.store(p);
  });
  auto av = [](std::int64_t i) { return static_cast<T>((i * 5) % 7 - 3); };
  auto bv = [](std::int64_t i) { return static_cast<T>((i * 3) % 5 - 2); };
  Buffer ba = make_buffer_fn<T>(Shape{M, K}, av), bb = make_buffer_fn<T>(Shape{K, Nn}, bv), bc(dtype_v<T>, Shape{M, Nn});
  interpret(g, ba, bb, bc);
  std::vector<T> want;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < Nn; ++j) {
      T acc = 0;
      for (std::int64_t k = 0; k < K; ++k) acc = static_cast<T>(acc + av(i * K + k) * bv(k * Nn + j));
      want.push_back(acc);
    }
  EXPECT_TRUE(elements_match(contents<T>(bc), want));
}

TEST(Dot, ByHandAndOuterProduct) {
  // [[1,2],[3,4],[5,6]] x [[1,0,-1],[2,1,0]] = [[5,2,-1],[11,4,-3],[17,6,-5]]
  Graph g = trace([](VmemRef<const float, 3, 2> a, VmemRef<const float, 2, 3> b, VmemRef<float, 3, 3> c, VmemRef<float, 2, 2> inner,
                     VmemRef<float, 3, 3> outer) {
    c.store(dot(a.load(), b.load()));
    inner.store(dot(b.load(), a.load()));
    // (3,1) x (1,3): an outer product of a's first column with b's first row.
    outer.store(dot(a.at(all, ds(0, 1)).load(), b.at(ds(0, 1), all).load()));
  });
  Buffer ba = make_buffer<float>(Shape{3, 2}, {1, 2, 3, 4, 5, 6}), bb = make_buffer<float>(Shape{2, 3}, {1, 0, -1, 2, 1, 0});
  Buffer bc(DType::f32, Shape{3, 3}), bi(DType::f32, Shape{2, 2}), bo(DType::f32, Shape{3, 3});
  interpret(g, ba, bb, bc, bi, bo);
  EXPECT_EQ(contents<float>(bc), (std::vector<float>{5, 2, -1, 11, 4, -3, 17, 6, -5}));
  // [[1,0,-1],[2,1,0]] x [[1,2],[3,4],[5,6]] = [[-4,-4],[5,8]]
  EXPECT_EQ(contents<float>(bi), (std::vector<float>{-4, -4, 5, 8}));
  EXPECT_EQ(contents<float>(bo), (std::vector<float>{1, 0, -1, 3, 0, -3, 5, 0, -5}));
}

TEST(Dot, ContractingMismatchWithDynamicExtentsIsATraceError) {
  auto f = [] {
    trace([](Ref<const float, extents<dyn, dyn>> a, Ref<const float, extents<dyn, dyn>> b) { (void)dot(a.load(), b.load()); },
          {Shape{2, 3}, Shape{4, 2}});
  };
  EXPECT_TRUE(throws_with<TraceError>(f, {"dot", "contracting"}));
}

// ---------------------------------------------------------------- mesh scalars

TEST(AxisIndex, WithoutAMeshIsARuntimeError) {
  Graph g = trace([](SmemRef<std::int32_t> out) { out.store(axis_index("x")); });
  Buffer b(DType::i32, Shape{});
  EXPECT_TRUE(throws_with<RuntimeError>([&] { interpret(g, b); }, {"axis_index", "\"x\"", "without a mesh"}));

  Graph g2 = trace([](SmemRef<std::int32_t> out) { out.store(axis_size("devices") + 1); });
  EXPECT_TRUE(throws_with<RuntimeError>([&] { interpret(g2, b); }, {"axis_size", "\"devices\"", "without a mesh"}));
}

TEST(AxisIndex, TracesWithoutAMesh) {
  // Tracing does not need a mesh; only running does.
  Graph g = trace([](SmemRef<std::int32_t> out) { out.store(axis_index("x") * 2); });
  EXPECT_EQ(refx::testing::count_ops(g, "axis_index"), 1u);
}

// ---------------------------------------------------------------- operand checks

// (Shapes that broadcast are tested in broadcast_test.cpp.)
TEST(Operands, DifferentDynamicShapesAreATraceError) {
  auto f = [] {
    trace([](Ref<const float, extents<dyn>> a, Ref<const float, extents<dyn>> b, Ref<float, extents<dyn>> c) {
      c.store(a.load() + b.load());
    }, {Shape{4}, Shape{5}, Shape{4}});
  };
  EXPECT_TRUE(throws_with<TraceError>(f, {"add's operands do not broadcast", "[4]", "[5]"}));
}

}  // namespace
