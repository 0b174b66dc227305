// dot (include/refx/ir/primitives/dot.hpp, the dot() functions of
// trace/value.hpp): every element type against a host reference that sums
// in double, the preferred element type (JAX's preferred_element_type),
// trans_b, edge shapes and the trace-time errors. Run by the reference
// interpreter, and once by the threaded runtime.
//
// Tolerances. Integer results are exact (wrapping). Floating results with
// small-integer inputs are exact in every type (every product and partial
// sum is an integer far below 2^8, so representable even in bf16). With
// fractional inputs, |got - ref| <= 4 k eps_acc sum_p |a_ip b_pj| + rounding
// of the result, where eps_acc is 2^-24 (f32 sums: f32, bf16, f16) or 2^-53
// (f64), and the result rounding is 2^-8 |ref| for bf16, 2^-11 |ref| for f16.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <refx/extend.hpp>
#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>

#include "support/testing.hpp"

using namespace refx;
using namespace refx::testing;

namespace {

/// Small integers (exact in every element type, products exact in bf16
/// sums up to 2^8), with negative values for signed types.
template <class T>
T small_int(std::int64_t i, std::int64_t salt) {
  const std::int64_t v = (i * 7 + salt * 3) % 5;
  return static_cast<T>(std::is_signed_v<T> || is_floating_v<T> ? v - 2 : v);
}
/// Fractional values in [-2, 2), exact in bf16 (8 significant bits).
template <class T>
T fractional(std::int64_t i, std::int64_t salt) {
  const double v = static_cast<double>((i * 37 + salt * 11) % 64 - 32) / 16.0 + 0.0078125 * static_cast<double>(i % 3);
  return static_cast<T>(v);
}

/// The host reference: a (m x k) times b (k x n, or n x k with trans_b),
/// summed in double; `sum_abs` gets sum_p |a_ip b_pj|.
template <class T>
std::vector<double> reference(const std::vector<T>& a, const std::vector<T>& b, std::int64_t m, std::int64_t k,
                              std::int64_t n, bool trans_b, std::vector<double>* sum_abs = nullptr) {
  std::vector<double> c(static_cast<std::size_t>(m * n));
  if (sum_abs) sum_abs->assign(c.size(), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p) {
        const double x = static_cast<double>(static_cast<compute_t<T>>(a[static_cast<std::size_t>(i * k + p)]));
        const double y = static_cast<double>(static_cast<compute_t<T>>(b[static_cast<std::size_t>(trans_b ? j * k + p : p * n + j)]));
        c[static_cast<std::size_t>(i * n + j)] += x * y;
        if (sum_abs) (*sum_abs)[static_cast<std::size_t>(i * n + j)] += std::fabs(x * y);
      }
  return c;
}

/// Runs c = dot(a, b) (or dot(a, b, trans_b)) with static extents M, K, N.
template <class T, std::int64_t M, std::int64_t K, std::int64_t Nn, bool TransB>
std::vector<T> run_dot(const std::vector<T>& a, const std::vector<T>& b) {
  constexpr std::int64_t B0 = TransB ? Nn : K, B1 = TransB ? K : Nn;
  Graph g = trace([](VmemRef<const T, M, K> x, VmemRef<const T, B0, B1> y, VmemRef<T, M, Nn> z) {
    if constexpr (TransB) {
      auto p = dot(x.load(), y.load(), trans_b);
      static_assert(std::is_same_v<decltype(p), Value<T, extents<M, Nn>>>);
      z.store(p);
    } else {
      z.store(dot(x.load(), y.load()));
    }
  });
  Buffer bx = make_buffer<T>(Shape{M, K}, a), by = make_buffer<T>(Shape{B0, B1}, b), bz(dtype_v<T>, Shape{M, Nn});
  interpret(g, bx, by, bz);
  return contents<T>(bz);
}

template <class T>
constexpr double eps_acc() {
  return std::is_same_v<T, double> ? 0x1p-53 : 0x1p-24;
}
template <class T>
constexpr double result_rounding() {
  return std::is_same_v<T, bf16> ? 0x1p-8 : std::is_same_v<T, f16> ? 0x1p-11 : 0.0;
}

template <class T>
class DotTyped : public ::testing::Test {};
using AllNumberTypes = ::testing::Types<float, double, bf16, f16, std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t>;
TYPED_TEST_SUITE(DotTyped, AllNumberTypes);

template <class T, std::int64_t M, std::int64_t K, std::int64_t Nn, bool TransB>
void check_small_integers() {
  std::vector<T> a, b;
  for (std::int64_t i = 0; i < M * K; ++i) a.push_back(small_int<T>(i, 1));
  for (std::int64_t i = 0; i < K * Nn; ++i) b.push_back(small_int<T>(i, 2));
  const std::vector<double> want = reference(a, b, M, K, Nn, TransB);
  const std::vector<T> got = run_dot<T, M, K, Nn, TransB>(a, b);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    // Integer results may wrap (u8: negative sums, i8: beyond 127): compare modulo the type.
    const T expect = is_integer_v<T> ? static_cast<T>(static_cast<std::int64_t>(want[i])) : static_cast<T>(want[i]);
    EXPECT_EQ(got[i], expect) << "element " << i << " of " << M << "x" << K << "x" << Nn << (TransB ? " trans_b" : "");
  }
}

// Shapes: 1x1x1; below Eigen's coefficient-wise threshold; non-square ones
// through Eigen's blocked GEMM kernel.
template <class T, bool TransB>
void check_small_integers_at_each_shape() {
  check_small_integers<T, 1, 1, 1, TransB>();
  check_small_integers<T, 3, 5, 4, TransB>();
  check_small_integers<T, 17, 33, 9, TransB>();
  check_small_integers<T, 40, 24, 56, TransB>();
}
TYPED_TEST(DotTyped, SmallIntegersAreExact) { check_small_integers_at_each_shape<TypeParam, false>(); }
TYPED_TEST(DotTyped, TransBSmallIntegersAreExact) { check_small_integers_at_each_shape<TypeParam, true>(); }

template <class T, std::int64_t M, std::int64_t K, std::int64_t Nn, bool TransB>
void check_fractional() {
  std::vector<T> a, b;
  for (std::int64_t i = 0; i < M * K; ++i) a.push_back(fractional<T>(i, 1));
  for (std::int64_t i = 0; i < K * Nn; ++i) b.push_back(fractional<T>(i, 2));
  std::vector<double> sum_abs;
  const std::vector<double> want = reference(a, b, M, K, Nn, TransB, &sum_abs);
  const std::vector<T> got = run_dot<T, M, K, Nn, TransB>(a, b);
  ASSERT_EQ(got.size(), want.size());
  bool any_inexact = false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double tol = 4.0 * K * eps_acc<T>() * sum_abs[i] + result_rounding<T>() * std::fabs(want[i]);
    const double g = static_cast<double>(static_cast<compute_t<T>>(got[i]));
    EXPECT_LE(std::fabs(g - want[i]), tol) << "element " << i << ": got " << g << ", want " << want[i];
    any_inexact = any_inexact || want[i] != std::round(want[i]);
  }
  EXPECT_TRUE(any_inexact) << "the inputs should exercise fractional sums";
}

template <class T>
class DotFloating : public ::testing::Test {};
using FloatingTypes = ::testing::Types<float, double, bf16, f16>;
TYPED_TEST_SUITE(DotFloating, FloatingTypes);

TYPED_TEST(DotFloating, FractionalWithinTolerance) {
  using T = TypeParam;
  check_fractional<T, 3, 5, 4, false>();
  check_fractional<T, 33, 65, 17, false>();
  check_fractional<T, 33, 65, 17, true>();
  check_fractional<T, 64, 64, 64, false>();
}

// ------------------------------------------------------ preferred element type

TEST(DotPreferred, Bf16TimesBf16IntoF32IsNotRounded) {
  // Checklist item 31: 1.0078125^2 = 1.01568603515625 exactly in f32; as bf16 it rounds to 1.015625.
  Graph g = trace([](VmemRef<const bf16, 1, 1> a, VmemRef<float, 1, 1> wide, VmemRef<bf16, 1, 1> narrow) {
    auto w = dot<float>(a.load(), a.load());
    static_assert(std::is_same_v<decltype(w), Value<float, extents<1, 1>>>);
    wide.store(w);
    narrow.store(dot(a.load(), a.load()));
  });
  Buffer ba = make_buffer<bf16>(Shape{1, 1}, {bf16(1.0078125f)}), bw(DType::f32, Shape{1, 1}), bn(DType::bf16, Shape{1, 1});
  interpret(g, ba, bw, bn);
  EXPECT_EQ(contents<float>(bw)[0], 1.01568603515625f);
  EXPECT_EQ(static_cast<float>(contents<bf16>(bn)[0]), 1.015625f);
}

TEST(DotPreferred, HalfSumsAccumulateInF32AndRoundOnce) {
  // 1000 products of 1 x 1: a bf16 accumulator would stall at 256 (checklist
  // item 28); f32 sums reach 1000, which bf16 and f16 hold exactly.
  constexpr std::int64_t K = 1000;
  Graph g = trace([](VmemRef<const bf16, 1, K> a, VmemRef<const f16, 1, K> h, VmemRef<bf16, 1, 1> sb, VmemRef<f16, 1, 1> sh,
                     VmemRef<float, 1, 1> sf) {
    sb.store(dot(a.load(), a.load(), trans_b));
    sh.store(dot(h.load(), h.load(), trans_b));
    sf.store(dot<float>(h.load(), h.load(), trans_b));
  });
  Buffer ba = make_buffer_fn<bf16>(Shape{1, K}, [](std::int64_t) { return bf16(1.0f); });
  Buffer bh = make_buffer_fn<f16>(Shape{1, K}, [](std::int64_t) { return f16(1.0f); });
  Buffer bsb(DType::bf16, Shape{1, 1}), bsh(DType::f16, Shape{1, 1}), bsf(DType::f32, Shape{1, 1});
  interpret(g, ba, bh, bsb, bsh, bsf);
  EXPECT_EQ(static_cast<float>(contents<bf16>(bsb)[0]), 1000.0f);
  EXPECT_EQ(static_cast<float>(contents<f16>(bsh)[0]), 1000.0f);
  EXPECT_EQ(contents<float>(bsf)[0], 1000.0f);
}

TEST(DotPreferred, NarrowIntegersIntoI32DoNotWrap) {
  // 127 * 127 * 3 = 48387 and 255 * 255 * 3 = 195075 need 32 bits; as i8 / u8 they wrap.
  Graph g = trace([](VmemRef<const std::int8_t, 1, 3> a, VmemRef<const std::uint8_t, 1, 3> u, VmemRef<std::int32_t, 1, 1> wa,
                     VmemRef<std::int8_t, 1, 1> na, VmemRef<std::int32_t, 1, 1> wu, VmemRef<std::uint8_t, 1, 1> nu) {
    wa.store(dot<std::int32_t>(a.load(), a.load(), trans_b));
    na.store(dot(a.load(), a.load(), trans_b));
    wu.store(dot<std::int32_t>(u.load(), u.load(), trans_b));
    nu.store(dot(u.load(), u.load(), trans_b));
  });
  Buffer ba = make_buffer<std::int8_t>(Shape{1, 3}, {127, -127, 127});
  Buffer bu = make_buffer<std::uint8_t>(Shape{1, 3}, {255, 255, 255});
  Buffer bwa(DType::i32, Shape{1, 1}), bna(DType::i8, Shape{1, 1}), bwu(DType::i32, Shape{1, 1}), bnu(DType::u8, Shape{1, 1});
  interpret(g, ba, bu, bwa, bna, bwu, bnu);
  EXPECT_EQ(contents<std::int32_t>(bwa)[0], 48387);
  EXPECT_EQ(contents<std::int8_t>(bna)[0], static_cast<std::int8_t>(48387 % 256));  // 48387 = 189 * 256 + 3
  EXPECT_EQ(contents<std::int32_t>(bwu)[0], 195075);
  EXPECT_EQ(contents<std::uint8_t>(bnu)[0], static_cast<std::uint8_t>(195075 % 256));
}

TEST(DotPreferred, IntegersIntoFloatAndF32IntoF64) {
  // i32 into f32: (2^24 + 1) is not an f32, but 3 * 5 + 7 * 11 = 92 is.
  // f32 into f64: (1 + 2^-20)^2 = 1 + 2^-19 + 2^-40 needs f64's mantissa.
  Graph g = trace([](VmemRef<const std::int32_t, 1, 2> a, VmemRef<const std::int32_t, 2, 1> b, VmemRef<float, 1, 1> f,
                     VmemRef<const float, 1, 1> x, VmemRef<double, 1, 1> d) {
    f.store(dot<float>(a.load(), b.load()));
    d.store(dot<double>(x.load(), x.load()));
  });
  Buffer ba = make_buffer<std::int32_t>(Shape{1, 2}, {3, 7}), bb = make_buffer<std::int32_t>(Shape{2, 1}, {5, 11});
  Buffer bx = make_buffer<float>(Shape{1, 1}, {1.0f + 0x1p-20f}), bf(DType::f32, Shape{1, 1}), bd(DType::f64, Shape{1, 1});
  interpret(g, ba, bb, bf, bx, bd);
  EXPECT_EQ(contents<float>(bf)[0], 92.0f);
  EXPECT_EQ(contents<double>(bd)[0], 1.0 + 0x1p-19 + 0x1p-40);
}

TEST(DotPreferred, PrinterShowsPreferredTypeAndTranspose) {
  Graph g = trace([](VmemRef<const bf16, 2, 3> a, VmemRef<float, 2, 2> s, VmemRef<bf16, 2, 2> t, VmemRef<bf16, 2, 3> u) {
    s.store(dot<float>(a.load(), a.load(), trans_b));
    t.store(dot(a.load(), a.load(), trans_b));
    (void)u;
  });
  const std::string text = to_text(g);
  EXPECT_NE(text.find("dot[preferred=f32,trans_b]"), std::string::npos) << text;
  EXPECT_NE(text.find("dot[trans_b]"), std::string::npos) << text;
}

// ------------------------------------------------------------ edge shapes

TEST(DotShapes, EmptyContractionGivesZeros) {
  // (3, 0) x (0, 4): every element is an empty sum, 0, whatever the output held.
  Graph g = trace([](VmemRef<const float, 3, 0> a, VmemRef<const float, 0, 4> b, VmemRef<float, 3, 4> c,
                     VmemRef<const std::int32_t, 3, 0> ia, VmemRef<std::int32_t, 3, 3> ic, VmemRef<bf16, 3, 3> hc) {
    c.store(dot(a.load(), b.load()));
    ic.store(dot(ia.load(), ia.load(), trans_b));
    hc.store(dot(cast<bf16>(a.load()), cast<bf16>(a.load()), trans_b));
  });
  Buffer ba(DType::f32, Shape{3, 0}), bb(DType::f32, Shape{0, 4}), bia(DType::i32, Shape{3, 0});
  Buffer bc = make_buffer_fn<float>(Shape{3, 4}, [](std::int64_t) { return 9.0f; });
  Buffer bic = make_buffer_fn<std::int32_t>(Shape{3, 3}, [](std::int64_t) { return 9; });
  Buffer bhc = make_buffer_fn<bf16>(Shape{3, 3}, [](std::int64_t) { return bf16(9.0f); });
  interpret(g, ba, bb, bc, bia, bic, bhc);
  EXPECT_EQ(contents<float>(bc), std::vector<float>(12, 0.0f));
  EXPECT_EQ(contents<std::int32_t>(bic), std::vector<std::int32_t>(9, 0));
  EXPECT_EQ(contents<bf16>(bhc), std::vector<bf16>(9, bf16(0.0f)));
}

TEST(DotShapes, DynamicExtentsFollowTheTranspose) {
  // a (2, 3) @ b.T with b (4, 3): (2, 4).
  Graph g = trace(
      [](Ref<const float, extents<dyn, dyn>> a, Ref<const float, extents<dyn, dyn>> b, Ref<float, extents<dyn, dyn>> c) {
        c.store(dot(a.load(), b.load(), trans_b));
      },
      {Shape{2, 3}, Shape{4, 3}, Shape{2, 4}});
  auto av = [](std::int64_t i) { return static_cast<float>(i + 1); };
  auto bv = [](std::int64_t i) { return static_cast<float>(i % 4 - 1); };
  Buffer ba = make_buffer_fn<float>(Shape{2, 3}, av), bb = make_buffer_fn<float>(Shape{4, 3}, bv), bc(DType::f32, Shape{2, 4});
  interpret(g, ba, bb, bc);
  std::vector<float> a, b;
  for (std::int64_t i = 0; i < 6; ++i) a.push_back(av(i));
  for (std::int64_t i = 0; i < 12; ++i) b.push_back(bv(i));
  const std::vector<double> want = reference(a, b, 2, 3, 4, true);
  EXPECT_EQ(contents<float>(bc), std::vector<float>(want.begin(), want.end()));
}

// ------------------------------------------------------------ errors

TEST(DotErrors, TransposedContractingMismatchIsATraceError) {
  // With trans_b, a's columns (3) meet b's columns (2), not its rows (3).
  auto f = [] {
    trace([](Ref<const float, extents<dyn, dyn>> a, Ref<const float, extents<dyn, dyn>> b) { (void)dot(a.load(), b.load(), trans_b); },
          {Shape{2, 3}, Shape{3, 2}});
  };
  EXPECT_TRUE(throws_with<TraceError>(f, {"refx: dot: contracting dimensions differ: [2,3] x [3,2] transposed", "dot_test.cpp"}));
}

TEST(DotErrors, BoundWithABadResultTypeOrAttributes) {
  auto narrower = [] {
    trace([](VmemRef<const float, 2, 2> a) {
      (void)extend::bind<f16, extents<2, 2>>(prim::dot, a.load(), a.load(), extend::Attrs{static_cast<std::int64_t>(DType::f16), 0});
    });
  };
  EXPECT_TRUE(throws_with<TraceError>(narrower, {"refx: dot: cannot give f16 results for f32 operands"}));
  auto floating_to_int = [] {
    trace([](VmemRef<const float, 2, 2> a) {
      (void)extend::bind<std::int64_t, extents<2, 2>>(prim::dot, a.load(), a.load(),
                                                      extend::Attrs{static_cast<std::int64_t>(DType::i64), 0});
    });
  };
  EXPECT_TRUE(throws_with<TraceError>(floating_to_int, {"cannot give i64 results for f32 operands", "floating for floating"}));
  auto one_attr = [] {
    trace([](VmemRef<const float, 2, 2> a) {
      (void)extend::bind<float, extents<2, 2>>(prim::dot, a.load(), a.load(), extend::Attrs{static_cast<std::int64_t>(DType::f32)});
    });
  };
  EXPECT_TRUE(throws_with<TraceError>(one_attr, {"refx: dot: takes two attributes", "got 1"}));
  auto bad_flags = [] {
    trace([](VmemRef<const float, 2, 2> a) {
      (void)extend::bind<float, extents<2, 2>>(prim::dot, a.load(), a.load(), extend::Attrs{static_cast<std::int64_t>(DType::f32), 6});
    });
  };
  EXPECT_TRUE(throws_with<TraceError>(bad_flags, {"refx: dot: the transposes attribute is 6"}));
  // No attributes: the operands' type, no transposition (as before attributes existed).
  Graph g = trace([](VmemRef<const float, 2, 3> a, VmemRef<const float, 3, 1> b, VmemRef<float, 2, 1> c) {
    c.store(extend::bind<float, extents<2, 1>>(prim::dot, a.load(), b.load()));
  });
  Buffer ba = make_buffer<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}), bb = make_buffer<float>(Shape{3, 1}, {1, 1, 2}), bc(DType::f32, Shape{2, 1});
  interpret(g, ba, bb, bc);
  EXPECT_EQ(contents<float>(bc), (std::vector<float>{9, 21}));
}

// ------------------------------------------------------------ threaded runtime

TEST(DotRuntime, CompiledKernelBf16IntoF32WithTransB) {
  // Scores of attention: q (4, 8) @ k.T with k (6, 8), bf16 in, f32 out, on the threaded runtime.
  constexpr std::int64_t M = 4, K = 8, Nn = 6;
  auto scores = kernel([](VmemRef<const bf16, M, K> q, VmemRef<const bf16, Nn, K> k, VmemRef<float, M, Nn> s) {
                  s.store(dot<float>(q.load(), k.load(), trans_b));
                }).compile(Mesh{{"x", 1}});
  auto qv = [](int, std::int64_t i) { return fractional<bf16>(i, 1); };
  auto kv = [](int, std::int64_t i) { return fractional<bf16>(i, 2); };
  auto q = Array::generate<bf16>(1, Shape{M, K}, qv);
  auto k = Array::generate<bf16>(1, Shape{Nn, K}, kv);
  const std::vector<float> got = scores(q, k)[0].to_host<float>(0);
  std::vector<bf16> a, b;
  for (std::int64_t i = 0; i < M * K; ++i) a.push_back(qv(0, i));
  for (std::int64_t i = 0; i < Nn * K; ++i) b.push_back(kv(0, i));
  std::vector<double> sum_abs;
  const std::vector<double> want = reference(a, b, M, K, Nn, true, &sum_abs);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), 4.0 * K * 0x1p-24 * sum_abs[i]) << "element " << i;
}

}  // namespace
