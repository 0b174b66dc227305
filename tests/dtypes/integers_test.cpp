// Integer semantics as XLA defines them (numerics reference D.9): add, sub
// and mul wrap modulo 2^n in i8, u8, i32, u32 and i64; x / 0 is -1 (all ones
// for unsigned types), INT_MIN / -1 is INT_MIN, x % 0 is x, INT_MIN % -1 is 0.
// Each op runs in the reference interpreter and in a compiled kernel (where
// the fusion pass chains elementwise ops into one loop) on one device.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>

namespace {

using namespace refx;

template <class T>
using In = Ref<const T, extents<dyn>, Vmem>;
template <class T>
using Out = Ref<T, extents<dyn>, Vmem>;

/// out = f(a, b) elementwise, by the interpreter and by a compiled kernel;
/// both results must agree, and the interpreter's is returned.
template <class T, class F>
std::vector<T> run(const std::vector<T>& a, const std::vector<T>& b, F f) {
  const auto n = static_cast<std::int64_t>(a.size());
  auto body = [f](In<T> x, In<T> y, Out<T> z) { z.store(f(x.load(), y.load())); };
  Buffer ba = Buffer::from<T>(Shape{n}, a), bb = Buffer::from<T>(Shape{n}, b), bz(dtype_v<T>, Shape{n});
  bz.fill_zero();
  interpret(trace(body, {Shape{n}, Shape{n}, Shape{n}}), ba, bb, bz);
  const std::vector<T> interpreted = bz.to_vector<T>();
  const auto exe = kernel(body).compile(Mesh{{"x", 1}}, {Shape{n}, Shape{n}, Shape{n}});
  const auto out = exe(Array::from_shards<T>({a}, Shape{n}), Array::from_shards<T>({b}, Shape{n}));
  EXPECT_EQ(out.at(0).template to_host<T>(0), interpreted) << "the compiled kernel and the interpreter disagree";
  return interpreted;
}

template <class T>
class IntegerSemantics : public ::testing::Test {};
using IntegerTypes = ::testing::Types<std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t>;
TYPED_TEST_SUITE(IntegerSemantics, IntegerTypes);

TYPED_TEST(IntegerSemantics, DivisionByZeroIsAllOnes) {
  using T = TypeParam;
  const std::vector<T> a{7, 0, 1, std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), 5};
  const std::vector<T> b(a.size(), T{0});
  const T ones = static_cast<T>(~static_cast<std::make_unsigned_t<T>>(0));  // -1, or 0xFF..FF unsigned
  EXPECT_EQ(run<T>(a, b, [](auto x, auto y) { return x / y; }), std::vector<T>(a.size(), ones));
}

TYPED_TEST(IntegerSemantics, RemainderByZeroIsTheDividend) {
  using T = TypeParam;
  const std::vector<T> a{7, 0, 1, std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), 5};
  const std::vector<T> b(a.size(), T{0});
  EXPECT_EQ(run<T>(a, b, [](auto x, auto y) { return x % y; }), a);
}

TYPED_TEST(IntegerSemantics, MinOverMinusOne) {
  using T = TypeParam;
  if constexpr (std::is_signed_v<T>) {
    constexpr T lo = std::numeric_limits<T>::min();
    const std::vector<T> a{lo, lo, 7}, b{-1, -1, -1};
    EXPECT_EQ(run<T>(a, b, [](auto x, auto y) { return x / y; }), (std::vector<T>{lo, lo, -7}));
    EXPECT_EQ(run<T>(a, b, [](auto x, auto y) { return x % y; }), (std::vector<T>{0, 0, 0}));
  } else {
    // Unsigned: -1 is the largest value, an ordinary divisor.
    constexpr T hi = std::numeric_limits<T>::max();
    const std::vector<T> a{hi, 7}, b{hi, hi};
    EXPECT_EQ(run<T>(a, b, [](auto x, auto y) { return x / y; }), (std::vector<T>{1, 0}));
    EXPECT_EQ(run<T>(a, b, [](auto x, auto y) { return x % y; }), (std::vector<T>{0, 7}));
  }
}

TYPED_TEST(IntegerSemantics, AddSubMulWrap) {
  using T = TypeParam;
  using U = std::make_unsigned_t<T>;
  constexpr T hi = std::numeric_limits<T>::max(), lo = std::numeric_limits<T>::min();
  const std::vector<T> a{hi, lo, hi, 0, 3, static_cast<T>(hi / 2 + 1), 1};
  const std::vector<T> b{1, 1, hi, 1, hi, 2, lo};
  std::vector<T> sum, diff, prod;
  for (std::size_t i = 0; i < a.size(); ++i) {
    // Reference in uint64 arithmetic, truncated to n bits.
    const auto wide = [](T x) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(x)); };
    sum.push_back(static_cast<T>(static_cast<U>(wide(a[i]) + wide(b[i]))));
    diff.push_back(static_cast<T>(static_cast<U>(wide(a[i]) - wide(b[i]))));
    prod.push_back(static_cast<T>(static_cast<U>(wide(a[i]) * wide(b[i]))));
  }
  EXPECT_EQ(sum[0], lo);                      // max + 1 wraps to min (127 + 1 = -128; 255 + 1 = 0)
  EXPECT_EQ(diff[3], static_cast<T>(-1));      // 0 - 1: -1, or 255 / 0xFFFFFFFF unsigned
  EXPECT_EQ(run<T>(a, b, [](auto x, auto y) { return x + y; }), sum);
  EXPECT_EQ(run<T>(a, b, [](auto x, auto y) { return x - y; }), diff);
  EXPECT_EQ(run<T>(a, b, [](auto x, auto y) { return x * y; }), prod);
  // Chained (fused in the compiled kernel): (a + b) * b - a, each step wrapping.
  std::vector<T> chained;
  for (std::size_t i = 0; i < a.size(); ++i)
    chained.push_back(static_cast<T>(static_cast<U>(static_cast<U>(static_cast<U>(sum[i]) * static_cast<U>(b[i])) -
                                                    static_cast<U>(a[i]))));
  EXPECT_EQ(run<T>(a, b, [](auto x, auto y) { return (x + y) * y - x; }), chained);
}

TEST(IntegerSemantics, ChecklistItem30) {
  EXPECT_EQ(run<std::int8_t>({127}, {1}, [](auto x, auto y) { return x + y; }), std::vector<std::int8_t>{-128});
  EXPECT_EQ(run<std::uint8_t>({0}, {1}, [](auto x, auto y) { return x - y; }), std::vector<std::uint8_t>{255});
  EXPECT_EQ(run<std::uint32_t>({0xFFFFFFFFu}, {1}, [](auto x, auto y) { return x + y; }), std::vector<std::uint32_t>{0});
  EXPECT_EQ(run<std::int32_t>({7}, {0}, [](auto x, auto y) { return x / y; }), std::vector<std::int32_t>{-1});
  EXPECT_EQ(run<std::uint32_t>({7}, {0}, [](auto x, auto y) { return x / y; }), std::vector<std::uint32_t>{0xFFFFFFFFu});
  constexpr std::int32_t lo = std::numeric_limits<std::int32_t>::min();
  EXPECT_EQ(run<std::int32_t>({lo}, {-1}, [](auto x, auto y) { return x / y; }), std::vector<std::int32_t>{lo});
  EXPECT_EQ(run<std::int32_t>({7}, {0}, [](auto x, auto y) { return x % y; }), std::vector<std::int32_t>{7});
  EXPECT_EQ(run<std::int32_t>({lo}, {-1}, [](auto x, auto y) { return x % y; }), std::vector<std::int32_t>{0});
}

TEST(IntegerSemantics, LiteralOperandsOfNarrowTypes) {
  // A literal takes the Value's type; one that does not fit is a trace-time error.
  EXPECT_EQ(run<std::uint8_t>({250, 3}, {0, 0}, [](auto x, auto) { return x + 10; }), (std::vector<std::uint8_t>{4, 13}));
  EXPECT_EQ(run<std::int8_t>({-128, 3}, {0, 0}, [](auto x, auto) { return x / 0; }), (std::vector<std::int8_t>{-1, -1}));
  EXPECT_THROW(run<std::uint8_t>({1}, {1}, [](auto x, auto) { return x + 256; }), TraceError);
}

}  // namespace
