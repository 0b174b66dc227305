// The vectorised forms of elementwise math: the math ops written with Value
// operators (one fused loop, or unfused) and a generic refx::map, which is
// called per tile with MapTile operands, compute the same bits; a map with
// typed parameters keeps the per-element path; the new Value functions
// (log1p, expm1, erf, sin, cos) run; bf16 maps round the f32 tile once.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "support/graph_testing.hpp"
#include <refx/runtime/runtime.hpp>

using namespace refx;
using refx::graph_testing::fused_matches_unfused;
using refx::graph_testing::live_ops;
using refx::testing::contents;
using refx::testing::make_buffer_fn;

namespace {

float xin(std::int64_t i) { return static_cast<float>((i * 37) % 101) * 0.19f - 9.5f; }
float yin(std::int64_t i) { return static_cast<float>((i * 11) % 53) * 0.07f + 0.1f; }

// The generic map function of docs/tutorial.md's section on map.
// [snippet:map-generic-exp-tanh]
constexpr auto exp_tanh = [](auto x) { return exp(x) * tanh(x); };
// [/snippet]

TEST(MapTile, GenericMapEqualsTheValueOperatorsBitForBit) {
  constexpr std::int64_t n = 1300;  // two whole tiles and a partial one
  const auto f = [](VmemRef<const float, n> x, VmemRef<float, n> a, VmemRef<float, n> b) {
    a.store(map(exp_tanh, x.load()));
    b.store(exp(x.load()) * tanh(x.load()));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{n}, xin));
  args.emplace_back(DType::f32, Shape{n});
  args.emplace_back(DType::f32, Shape{n});
  const Graph g = fused_matches_unfused(f, args);
  EXPECT_NE(to_text(g).find("fused[map loads=1 store]"), std::string::npos) << to_text(g);
  const auto x = contents<float>(args[0]), a = contents<float>(args[1]), b = contents<float>(args[2]);
  EXPECT_EQ(a, b);
  for (std::size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(a[i], std::exp(double(x[i])) * std::tanh(double(x[i])), 1e-5 * std::max(1.0, std::fabs(double(a[i]))))
        << i;
}

TEST(MapTile, ArithmeticComparisonsSelectAndScalarsOnTiles) {
  constexpr std::int64_t n = 700;
  const auto f = [](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<float, n> a, VmemRef<bool, n> p) {
    a.store(map(
        [](auto u, auto v) {
          auto w = select(u > 0, u * 2 - v / 4, -u + 1.5f);
          w += max(v, 1.0f) - min(u, v);
          return pow(sqrt(abs(w)) + v, 2) + logistic(u) + log1p(v) + expm1(u * 0.1f) + erf(u) + sin(u) * cos(v) +
                 log(v) + rsqrt(v);
        },
        x.load(), y.load()));
    p.store(map([](auto u, auto v) { return u < v; }, x.load(), y.load()));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{n}, xin));
  args.push_back(make_buffer_fn<float>(Shape{n}, yin));
  args.emplace_back(DType::f32, Shape{n});
  args.emplace_back(DType::pred, Shape{n});
  fused_matches_unfused(f, args);
  const auto x = contents<float>(args[0]), y = contents<float>(args[1]), a = contents<float>(args[2]);
  const auto p = contents<bool>(args[3]);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = x[i], v = y[i];
    double w = u > 0 ? u * 2 - v / 4 : -u + 1.5;
    w += std::max(v, 1.0) - std::min(u, v);
    const double want = std::pow(std::sqrt(std::fabs(w)) + v, 2) + 1 / (1 + std::exp(-u)) + std::log1p(v) +
                        std::expm1(u * 0.1) + std::erf(u) + std::sin(u) * std::cos(v) + std::log(v) + 1 / std::sqrt(v);
    EXPECT_NEAR(a[i], want, 2e-5 * std::max(1.0, std::fabs(want))) << i;
    EXPECT_EQ(p[i], x[i] < y[i]) << i;
  }
}

TEST(MapTile, TypedParametersKeepThePerElementPath) {
  // A function with float parameters is called per element: std::exp (libm)
  // here, so the result is the C++ library's to the bit.
  constexpr std::int64_t n = 100;
  const auto f = [](VmemRef<const float, n> x, VmemRef<float, n> a) {
    a.store(map([](float u) { return std::exp(u); }, x.load()));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{n}, xin));
  args.emplace_back(DType::f32, Shape{n});
  fused_matches_unfused(f, args);
  const auto x = contents<float>(args[0]), a = contents<float>(args[1]);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(a[i], std::exp(x[i])) << i;
  // refx's scalar functions are the C++ library's too.
  EXPECT_EQ(refx::exp(0.7f), std::exp(0.7f));
  EXPECT_EQ(refx::logistic(0.0), 0.5);
}

TEST(MapTile, Bf16TilesAreF32AndTheResultIsRoundedOnce) {
  constexpr std::int64_t n = 600;
  const auto f = [](VmemRef<const bf16, n> x, VmemRef<bf16, n> a, VmemRef<float, n> b) {
    a.store(map(exp_tanh, x.load()));
    b.store(map(exp_tanh, cast<float>(x.load())));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<bf16>(Shape{n}, [](std::int64_t i) { return bf16(xin(i)); }));
  args.emplace_back(DType::bf16, Shape{n});
  args.emplace_back(DType::f32, Shape{n});
  fused_matches_unfused(f, args);
  const auto a = contents<bf16>(args[1]);
  const auto b = contents<float>(args[2]);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(float(a[i]), float(bf16(b[i]))) << i;
}

TEST(MapTile, NewValueFunctionsMatchTheHost) {
  constexpr std::int64_t n = 40;
  const auto f = [](VmemRef<const double, n> x, VmemRef<double, 5, n> y) {
    const Value<double, extents<n>> v = x.load();
    y.at(0).store(log1p(v));
    y.at(1).store(expm1(v));
    y.at(2).store(erf(v));
    y.at(3).store(sin(v));
    y.at(4).store(cos(v));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<double>(Shape{n}, [](std::int64_t i) { return double(yin(i)) - 0.5; }));
  args.emplace_back(DType::f64, Shape{5, n});
  fused_matches_unfused(f, args);
  const auto x = contents<double>(args[0]), y = contents<double>(args[1]);
  for (std::size_t i = 0; i < x.size(); ++i) {
    // f64 is computed by the C++ library.
    EXPECT_EQ(y[i], std::log1p(x[i]));
    EXPECT_EQ(y[n + i], std::expm1(x[i]));
    EXPECT_EQ(y[2 * n + i], std::erf(x[i]));
    EXPECT_EQ(y[3 * n + i], std::sin(x[i]));
    EXPECT_EQ(y[4 * n + i], std::cos(x[i]));
  }
}

}  // namespace
