// Accuracy of the vectorised math kernels (include/refx/ir/vector_math.hpp)
// on f32: the max error in ulps against a double-precision reference over a
// sweep of f32 inputs (every 509th bit pattern, both signs, so every binade
// from denormals to the largest floats) and the edge cases (+-inf, NaN,
// denormals, -0, exp's underflow and overflow, log of 0 and negatives).
// Each function runs through its primitive's element function, the code
// every Value op, fused loop and map tile calls. The bounds asserted are the
// ones docs/math.md documents; the test prints the measured table.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include <refx/refx.hpp>

using namespace refx;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan = std::numeric_limits<float>::quiet_NaN();
constexpr float denorm_min = std::numeric_limits<float>::denorm_min();

/// The error of `got` in ulps of the float nearest `want` (computed in
/// double). A NaN, an infinity or a zero of the wrong sign where the
/// reference has none (or has one) is an infinite error.
double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : inf;
  const auto w = static_cast<float>(want);
  if (std::isinf(w) || std::isnan(got) || std::isinf(got)) return got == w ? 0 : inf;
  if (want == 0 && got == 0) return std::signbit(got) == std::signbit(want) ? 0 : inf;
  const int exponent = std::max(std::ilogb(w == 0 ? std::numeric_limits<float>::min() : w), -126);
  return std::fabs(static_cast<double>(got) - want) / std::ldexp(1.0, exponent - 23);
}

std::vector<float> run(const Primitive& p, const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> out(a.size());
  const void* ins[] = {a.data(), b.empty() ? a.data() : b.data()};
  p.elementwise(DType::f32, ins, out.data(), static_cast<std::int64_t>(a.size()));
  return out;
}

std::vector<float> edge_inputs() {
  return {0.0f,    -0.0f,   inf,     -inf,    nan,   denorm_min, -denorm_min, 1e-40f,   -1e-40f, 1e-30f, -1e-30f,
          1.0f,    -1.0f,   0.5f,    88.0f,   88.5f, 88.7f,      89.0f,       100.0f,   -87.0f,  -88.0f, -89.0f,
          -100.0f, -103.0f, -104.0f, -110.0f, 1e30f, -1e30f,     3.4e38f,     -3.4e38f, 1e7f,    -1e7f};
}

/// Every 509th non-negative bit pattern up to +inf, with its negation, and the edge cases.
std::vector<float> sweep_inputs() {
  std::vector<float> xs;
  for (std::uint32_t bits = 0; bits <= 0x7f800000u; bits += 509) {
    float x;
    std::memcpy(&x, &bits, sizeof x);
    xs.push_back(x);
    xs.push_back(-x);
  }
  for (float e : edge_inputs()) xs.push_back(e);
  return xs;
}

struct Measured {
  double max_ulp;
  float worst_x;
};

Measured measure_unary(const Primitive& p, const std::function<double(double)>& ref) {
  static const std::vector<float> xs = sweep_inputs();
  const std::vector<float> got = run(p, xs, {});
  Measured m{0, 0};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double e = ulp_error(got[i], ref(static_cast<double>(xs[i])));
    if (e > m.max_ulp) m = {e, xs[i]};
  }
  return m;
}

struct UnaryCase {
  const char* name;
  const Primitive* prim;
  double (*ref)(double);
  double bound;  // docs/math.md
};

// The bounds cover SSE2 (the default x86-64 build), AVX2 and AVX-512 builds;
// measured maxima are in docs/math.md.
const UnaryCase unary_cases[] = {
    {"exp", &prim::exp, [](double x) { return std::exp(x); }, 6},
    {"log", &prim::log, [](double x) { return std::log(x); }, 2},
    {"log1p", &prim::log1p, [](double x) { return std::log1p(x); }, 3},
    {"expm1", &prim::expm1, [](double x) { return std::expm1(x); }, 6},
    {"tanh", &prim::tanh, [](double x) { return std::tanh(x); }, 6},
    {"logistic", &prim::logistic, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 5},
    {"erf", &prim::erf, [](double x) { return std::erf(x); }, 7},
    {"sqrt", &prim::sqrt, [](double x) { return std::sqrt(x); }, 0.5},
    {"rsqrt", &prim::rsqrt, [](double x) { return 1.0 / std::sqrt(x); }, 1.5},
    {"sin", &prim::sin, [](double x) { return std::sin(x); }, 2.5},
    {"cos", &prim::cos, [](double x) { return std::cos(x); }, 2.5},
};

TEST(MathAccuracy, UnaryF32WithinDocumentedUlps) {
  for (const UnaryCase& c : unary_cases) {
    const Measured m = measure_unary(*c.prim, c.ref);
    fmt::print("| {:<8} | {:.2f} | {} (worst at x = {:g})\n", c.name, m.max_ulp, c.bound, m.worst_x);
    EXPECT_LE(m.max_ulp, c.bound) << c.name << " at x = " << m.worst_x;
  }
}

TEST(MathAccuracy, PowF32WithinDocumentedUlps) {
  std::vector<float> xs, ys;
  std::vector<float> bases, exponents{0.0f, -0.0f, 1.0f,   -1.0f,   2.0f, 3.0f, -3.0f, 0.5f,  -0.5f,
                                      1.5f, 10.0f, 100.0f, -100.0f, inf,  -inf, nan,   1e10f, -1e10f};
  for (std::uint32_t bits = 0; bits <= 0x7f800000u; bits += 1000003) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    bases.push_back(v);
    bases.push_back(-v);
  }
  for (std::uint32_t bits = 0; bits <= 0x7f800000u; bits += 4000037) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    exponents.push_back(v);
    exponents.push_back(-v);
  }
  for (float e : edge_inputs()) bases.push_back(e);
  for (float x : bases)
    for (float y : exponents) {
      xs.push_back(x);
      ys.push_back(y);
    }
  const std::vector<float> got = run(prim::pow, xs, ys);
  Measured m{0, 0};
  float worst_y = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double e = ulp_error(got[i], std::pow(static_cast<double>(xs[i]), static_cast<double>(ys[i])));
    if (e > m.max_ulp) {
      m = {e, xs[i]};
      worst_y = ys[i];
    }
  }
  fmt::print("| pow      | {:.2f} | 1 (worst at x = {:g}, y = {:g}, {} pairs)\n", m.max_ulp, m.worst_x, worst_y,
             xs.size());
  EXPECT_LE(m.max_ulp, 1.0) << "pow at (" << m.worst_x << ", " << worst_y << ")";
}

float one(const Primitive& p, float x, float y = 0) { return run(p, {x}, {y})[0]; }

// The IEEE / C results the sweep checks, spelled out.
TEST(MathAccuracy, EdgeCasesGiveIeeeResults) {
  EXPECT_EQ(one(prim::exp, -inf), 0.0f);
  EXPECT_EQ(one(prim::exp, -110.0f), 0.0f);  // underflows to 0
  EXPECT_GT(one(prim::exp, -100.0f), 0.0f);  // a denormal
  EXPECT_LT(one(prim::exp, -100.0f), std::numeric_limits<float>::min());
  EXPECT_EQ(one(prim::exp, 89.0f), inf);  // overflows
  EXPECT_LT(one(prim::exp, 88.7f), inf);
  EXPECT_EQ(one(prim::exp, inf), inf);
  EXPECT_TRUE(std::isnan(one(prim::exp, nan)));
  EXPECT_EQ(one(prim::exp, -0.0f), 1.0f);
  EXPECT_EQ(one(prim::log, 0.0f), -inf);
  EXPECT_EQ(one(prim::log, -0.0f), -inf);
  EXPECT_TRUE(std::isnan(one(prim::log, -1.0f)));
  EXPECT_TRUE(std::isnan(one(prim::log, -inf)));
  EXPECT_EQ(one(prim::log, inf), inf);
  EXPECT_NEAR(one(prim::log, denorm_min), std::log(static_cast<double>(denorm_min)), 1e-4);
  EXPECT_EQ(one(prim::log1p, -1.0f), -inf);
  EXPECT_TRUE(std::signbit(one(prim::log1p, -0.0f)));
  EXPECT_EQ(one(prim::expm1, -inf), -1.0f);
  EXPECT_TRUE(std::signbit(one(prim::expm1, -0.0f)));
  EXPECT_EQ(one(prim::tanh, inf), 1.0f);
  EXPECT_EQ(one(prim::tanh, -inf), -1.0f);
  EXPECT_TRUE(std::signbit(one(prim::tanh, -0.0f)));
  EXPECT_EQ(one(prim::logistic, -inf), 0.0f);
  EXPECT_EQ(one(prim::logistic, inf), 1.0f);
  EXPECT_EQ(one(prim::erf, -inf), -1.0f);
  EXPECT_TRUE(std::signbit(one(prim::erf, -0.0f)));
  EXPECT_TRUE(std::signbit(one(prim::sqrt, -0.0f)));
  EXPECT_TRUE(std::isnan(one(prim::sqrt, -1.0f)));
  EXPECT_EQ(one(prim::sqrt, inf), inf);
  EXPECT_EQ(one(prim::rsqrt, 0.0f), inf);
  EXPECT_EQ(one(prim::rsqrt, inf), 0.0f);
  EXPECT_TRUE(std::isnan(one(prim::sin, inf)));
  EXPECT_TRUE(std::isnan(one(prim::cos, -inf)));
  EXPECT_TRUE(std::signbit(one(prim::sin, -0.0f)));
  EXPECT_EQ(one(prim::pow, 0.0f, -1.0f), inf);
  EXPECT_EQ(one(prim::pow, -0.0f, -1.0f), -inf);
  EXPECT_TRUE(std::signbit(one(prim::pow, -0.0f, 3.0f)));
  EXPECT_EQ(one(prim::pow, -2.0f, 3.0f), -8.0f);
  EXPECT_TRUE(std::isnan(one(prim::pow, -2.0f, 0.5f)));
  EXPECT_EQ(one(prim::pow, nan, 0.0f), 1.0f);
  EXPECT_EQ(one(prim::pow, 1.0f, nan), 1.0f);
}

// An element's result does not depend on where it sits: every offset and
// length computes what a lone element does (the tail is a padded packet).
TEST(MathAccuracy, ResultDoesNotDependOnPosition) {
  std::vector<float> xs;
  for (int i = 0; i < 100; ++i) xs.push_back(static_cast<float>(i) * 0.37f - 18.0f);
  for (const UnaryCase& c : unary_cases) {
    const std::vector<float> all = run(*c.prim, xs, {});
    for (std::size_t off = 0; off < 20; ++off) {
      const std::vector<float> part(xs.begin() + static_cast<std::ptrdiff_t>(off), xs.end());
      const std::vector<float> got = run(*c.prim, part, {});
      for (std::size_t i = 0; i < part.size(); ++i)
        ASSERT_EQ(std::memcmp(&got[i], &all[off + i], sizeof(float)), 0) << c.name << " at " << off + i;
    }
  }
}

// bf16 and f16 go through f32: converted, computed, rounded once.
TEST(MathAccuracy, HalfTypesRoundTheF32Result) {
  std::vector<bf16> hb;
  std::vector<f16> hf;
  std::vector<float> wide_b, wide_f;
  for (int i = 0; i < 700; ++i) {
    const float x = static_cast<float>(i) * 0.031f - 9.0f;
    hb.push_back(static_cast<bf16>(x));
    hf.push_back(static_cast<f16>(x));
    wide_b.push_back(static_cast<float>(hb.back()));
    wide_f.push_back(static_cast<float>(hf.back()));
  }
  for (const UnaryCase& c : unary_cases) {
    const std::vector<float> want_b = run(*c.prim, wide_b, {}), want_f = run(*c.prim, wide_f, {});
    std::vector<bf16> got_b(hb.size());
    std::vector<f16> got_f(hf.size());
    const void* ib[] = {hb.data()};
    const void* iff[] = {hf.data()};
    c.prim->elementwise(DType::bf16, ib, got_b.data(), static_cast<std::int64_t>(hb.size()));
    c.prim->elementwise(DType::f16, iff, got_f.data(), static_cast<std::int64_t>(hf.size()));
    for (std::size_t i = 0; i < hb.size(); ++i) {
      const bf16 wb = static_cast<bf16>(want_b[i]);
      const f16 wf = static_cast<f16>(want_f[i]);
      ASSERT_EQ(std::memcmp(&got_b[i], &wb, sizeof wb), 0) << c.name << " bf16 at " << i;
      ASSERT_EQ(std::memcmp(&got_f[i], &wf, sizeof wf), 0) << c.name << " f16 at " << i;
    }
  }
}

}  // namespace
