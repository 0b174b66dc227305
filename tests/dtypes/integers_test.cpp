// Integer semantics as XLA defines them (numerics reference D.9): add, sub
// and mul wrap modulo 2^n in i8, u8, i32, u32 and i64; x / 0 is -1 (all ones
// for unsigned types), INT_MIN / -1 is INT_MIN, x % 0 is x, INT_MIN % -1 is 0.
// Each op runs in the reference interpreter and in a compiled kernel (where
// the fusion pass chains elementwise ops into one loop) on one device.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
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

// 8- and 16-bit C++ integers (std::int8_t, std::uint8_t, std::int16_t,
// std::uint16_t, char) follow the rule of every integer: as an operand or a
// stored literal they take the Value's element type when the value fits (a
// TraceError otherwise); as a Scalar they convert implicitly only when every
// value of their type fits (compile_fail/scalar_i8_from_int16.cpp is the
// rejected side), and an `int` literal is range-checked while tracing.
TEST(IntegerSemantics, SmallIntegerOperandsPromoteLosslessly) {
  EXPECT_EQ(run<std::int32_t>({10, -10}, {0, 0}, [](auto x, auto) { return x + std::int8_t{-3}; }),
            (std::vector<std::int32_t>{7, -13}));
  EXPECT_EQ(run<std::int32_t>({1, 2}, {0, 0}, [](auto x, auto) { return x + std::uint16_t{60000}; }),
            (std::vector<std::int32_t>{60001, 60002}));
  EXPECT_EQ(run<std::int32_t>({0, 1}, {0, 0}, [](auto x, auto) { return x + char{'A'}; }),
            (std::vector<std::int32_t>{65, 66}));
  EXPECT_EQ(run<std::int64_t>({5}, {0}, [](auto x, auto) { return x * std::int16_t{-300}; }),
            (std::vector<std::int64_t>{-1500}));
  // In the element type's arithmetic: 100 + 100 wraps in i8.
  EXPECT_EQ(run<std::int8_t>({100, -1}, {0, 0}, [](auto x, auto) { return x + std::int16_t{100}; }),
            (std::vector<std::int8_t>{-56, 99}));
  EXPECT_EQ(run<std::uint8_t>({1}, {0}, [](auto x, auto) { return x + std::uint16_t{254}; }),
            (std::vector<std::uint8_t>{255}));
  // A value the element type cannot hold is an error, not a wrap-around.
  EXPECT_THROW(run<std::int8_t>({1}, {0}, [](auto x, auto) { return x + std::int16_t{1000}; }), TraceError);
  EXPECT_THROW(run<std::uint8_t>({1}, {0}, [](auto x, auto) { return x + std::int8_t{-1}; }), TraceError);
  EXPECT_THROW(run<std::uint32_t>({1}, {0}, [](auto x, auto) { return x - std::int16_t{-1}; }), TraceError);
}

TEST(IntegerSemantics, SmallIntegerScalarsConvertLosslessly) {
  EXPECT_EQ(run<std::int32_t>({1, 2}, {0, 0},
                              [](auto x, auto) {
                                Scalar<std::int32_t> a = std::int16_t{-7};
                                Scalar<std::int32_t> b = std::uint16_t{65535};
                                Scalar<std::int32_t> c = std::uint8_t{200};
                                return x + a + b + c;
                              }),
            (std::vector<std::int32_t>{65729, 65730}));
  EXPECT_EQ(run<std::int8_t>({1, 2}, {0, 0},
                             [](auto x, auto) {
                               Scalar<std::int8_t> a = std::int8_t{-5};
                               Scalar<std::int8_t> b = 100;  // an int literal that fits
                               return x + a + b;
                             }),
            (std::vector<std::int8_t>{96, 97}));
  EXPECT_EQ(run<std::uint8_t>({1}, {0},
                              [](auto x, auto) {
                                Scalar<std::uint8_t> a = 200;
                                return x + a;
                              }),
            (std::vector<std::uint8_t>{201}));
  EXPECT_EQ(run<std::uint32_t>({1}, {0},
                               [](auto x, auto) {
                                 Scalar<std::uint32_t> a = 0xFF;
                                 Scalar<std::uint32_t> b = std::uint16_t{0xFF00};
                                 return (x | a) + b;
                               }),
            (std::vector<std::uint32_t>{0xFFFFu}));
  // An int literal out of the element type's range: a TraceError naming the Scalar.
  try {
    run<std::int8_t>({1}, {0}, [](auto x, auto) {
      Scalar<std::int8_t> a = 300;
      return x + a;
    });
    ADD_FAILURE() << "Scalar<std::int8_t> a = 300 traced";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("the integer 300 does not fit the i8 elements of the Scalar it initialises"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(run<std::uint32_t>({1}, {0}, [](auto x, auto) {
    Scalar<std::uint32_t> a = -1;
    return x + a;
  }), TraceError);
}

TEST(IntegerSemantics, SmallIntegerLiteralsStored) {
  auto store_lit = [](auto lit) {
    return [lit](auto x, auto) {
      (void)x;
      return x * std::int8_t{0} + lit;
    };
  };
  EXPECT_EQ(run<std::int32_t>({9}, {0}, store_lit(std::int16_t{-32768})), (std::vector<std::int32_t>{-32768}));
  EXPECT_EQ(run<std::uint8_t>({9}, {0}, store_lit(std::uint8_t{255})), (std::vector<std::uint8_t>{255}));
  // store(...) of a small integer literal: the element type's value.
  const std::int64_t n = 2;
  auto body = [](Ref<const std::int8_t, extents<dyn>, Vmem> x, Ref<std::int32_t, extents<dyn>, Vmem> y,
                 Ref<std::uint8_t, extents<dyn>, Vmem> z) {
    (void)x;
    y.store(std::int16_t{-300});
    z.store(char{'z'});
  };
  Buffer bx = Buffer::from<std::int8_t>(Shape{n}, {0, 0}), by(DType::i32, Shape{n}), bz(DType::u8, Shape{n});
  interpret(trace(body, {Shape{n}, Shape{n}, Shape{n}}), bx, by, bz);
  EXPECT_EQ(by.to_vector<std::int32_t>(), (std::vector<std::int32_t>{-300, -300}));
  EXPECT_EQ(bz.to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{122, 122}));
  auto bad = [](Ref<const std::int8_t, extents<dyn>, Vmem> x, Ref<std::uint8_t, extents<dyn>, Vmem> z) {
    (void)x;
    z.store(std::int16_t{-1});
  };
  EXPECT_THROW(trace(bad, {Shape{n}, Shape{n}}), TraceError);
}

// Issue 52: a std::int64_t where a 32-bit integer is expected (a loop bound
// written as `constexpr std::int64_t kRows`) converts; a value that does not
// fit 32 bits is a TraceError naming the line, not a wrapped bound.
TEST(IntegerSemantics, Int64LoopBoundsConvertAndAreRangeChecked) {
  constexpr std::int64_t kRows = 4;
  auto rows = [](Ref<float, extents<kRows, 2>, Vmem> y) {
    fori_loop(0, kRows, [&](Scalar<std::int32_t> r) { y.at(r, all).store(cast<float>(r)); });
  };
  Buffer by(DType::f32, Shape{kRows, 2});
  by.fill_zero();
  interpret(trace(rows), by);
  EXPECT_EQ(by.to_vector<float>(), (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3}));

  const std::int64_t too_many = std::int64_t{1} << 32;  // would wrap to a bound of 0
  int line = 0;
  auto wrapping = [&](Ref<float, extents<kRows, 2>, Vmem> y) {
    line = __LINE__ + 1;
    fori_loop(0, too_many, [&](Scalar<std::int32_t> r) { y.at(r, all).store(0.0f); });
  };
  try {
    (void)trace(wrapping);
    ADD_FAILURE() << "a loop bound of 2^32 traced";
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("refx: the integer 4294967296 does not fit the i32 elements of the Scalar it initialises"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("integers_test.cpp:" + std::to_string(line)), std::string::npos) << what;
  }
}

}  // namespace
