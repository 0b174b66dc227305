// Fusion: elementwise chains become one `fused` loop whose results are
// bit-identical to the unfused graph; reductions and dot stay separate;
// loads, broadcasts and the final store are absorbed only when that is safe.

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

#include "support/graph_testing.hpp"
#include <refx/passes/pipeline.hpp>

using namespace refx;
using namespace refx::testing;
using namespace refx::graph_testing;

namespace {


std::vector<float> awkward_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1e3f, 1e3f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  const float special[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::max(), 1e-38f};
  for (std::size_t i = 0; i < n; i += 97) v[i] = special[(i / 97) % 8];
  return v;
}

TEST(Fuse, ReluOfAxpbyIsOneLoopAndBitIdentical) {
  constexpr std::int64_t n = 3000;  // not a multiple of the tile
  const auto f = [](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<float, n> out) {
    out.store(max(x.load() * 2.5f + y.load() * -0.75f, 0.0f));
  };
  std::vector<Buffer> args;
  args.push_back(refx::testing::make_buffer<float>(Shape{n}, awkward_floats(n, 1)));
  args.push_back(refx::testing::make_buffer<float>(Shape{n}, awkward_floats(n, 2)));
  args.emplace_back(DType::f32, Shape{n});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_EQ(count_ops(g, "fused"), 1u);
  const std::string text = to_text(g);
  EXPECT_NE(text.find("fused[mul mul add max loads=2 store]"), std::string::npos) << text;
  EXPECT_EQ(text.find("broadcast"), std::string::npos) << text;
  EXPECT_EQ(text.find("<-"), std::string::npos) << text;  // no separate load or store
}

TEST(Fuse, ReductionsAndDotStaySeparate) {
  const auto f = [](VmemRef<const float, 8, 16> x, VmemRef<const float, 16, 4> w, VmemRef<float, 16> s,
                    VmemRef<float, 8, 4> d) {
    s.store(reduce_sum<0>(exp(x.load()) * 0.5f) + 1.0f);
    d.store(dot(x.load() * 2.0f, w.load()) - 3.0f);
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{8, 16}, [](std::int64_t i) { return float(i % 13) * 0.1f; }));
  args.push_back(make_buffer_fn<float>(Shape{16, 4}, [](std::int64_t i) { return float(i % 5) - 2.0f; }));
  args.emplace_back(DType::f32, Shape{16});
  args.emplace_back(DType::f32, Shape{8, 4});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_EQ(count_ops(g, "reduce_sum"), 1u);
  EXPECT_EQ(count_ops(g, "dot"), 1u);
  const std::string text = to_text(g);
  EXPECT_NE(text.find("fused[exp mul loads=1]"), std::string::npos) << text;
  EXPECT_NE(text.find("reduce_sum"), std::string::npos);
}

TEST(Fuse, IntermediatesWithOtherUsersAreNotFusedAway) {
  const auto f = [](VmemRef<const float, 64> x, VmemRef<float, 64> a, VmemRef<float, 64> b) {
    auto t = exp(x.load() * 2.0f);
    a.store(t + 1.0f);
    b.store(t * 3.0f);
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{64}, [](std::int64_t i) { return float(i) * 0.01f; }));
  args.emplace_back(DType::f32, Shape{64});
  args.emplace_back(DType::f32, Shape{64});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_EQ(count_ops(g, "fused"), 3u);  // t's chain, and each consumer with its store
}

TEST(Fuse, StridedViewsAreGatheredAndScattered) {
  const auto f = [](VmemRef<const float, 40, 30> x, VmemRef<float, 40, 30> y) {
    y.at(ds<20>(1, 2), ds<10>(0, 3)).store(x.at(ds<20>(0, 2), ds<10>(2, 3)).load() * 3.0f - 1.0f);
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{40, 30}, [](std::int64_t i) { return float(i); }));
  args.push_back(make_buffer_fn<float>(Shape{40, 30}, [](std::int64_t) { return -7.0f; }));
  Graph g = fused_matches_unfused(f, args);
  EXPECT_EQ(count_ops(g, "fused"), 1u);
  EXPECT_EQ(contents<float>(args[1])[1 * 30 + 3], float(0 * 30 + 5) * 3.0f - 1.0f);
}

TEST(Fuse, AccumulationIsAbsorbed) {
  const auto f = [](VmemRef<const float, 2000> x, VmemRef<float, 2000> y) { y += x.load() * x.load() + 0.5f; };
  std::vector<Buffer> args;
  args.push_back(refx::testing::make_buffer<float>(Shape{2000}, awkward_floats(2000, 3)));
  args.push_back(refx::testing::make_buffer<float>(Shape{2000}, awkward_floats(2000, 4)));
  Graph g = fused_matches_unfused(f, args);
  EXPECT_NE(to_text(g).find("accum]"), std::string::npos) << to_text(g);
}

TEST(Fuse, InPlaceUpdateOfTheSameRegion) {
  const auto f = [](VmemRef<float, 2500> x) { x.store(x.load() * 2.0f + 1.0f); };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{2500}, [](std::int64_t i) { return float(i); }));
  Graph g = fused_matches_unfused(f, args);
  EXPECT_NE(to_text(g).find("loads=1 store"), std::string::npos);
  EXPECT_EQ(contents<float>(args[0])[2100], 4201.0f);
}

TEST(Fuse, ShiftedStoreIntoTheLoadedRefIsNotStreamed) {
  // Tile-by-tile streaming would read elements already overwritten.
  const auto f = [](VmemRef<float, 3000> x) { x.at(ds<2999>(1)).store(x.at(ds<2999>(0)).load() + 1.0f); };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{3000}, [](std::int64_t i) { return float(i); }));
  fused_matches_unfused(f, args);
  EXPECT_EQ(contents<float>(args[0])[2000], 2000.0f);  // x[1999] + 1 from before the store
}

TEST(Fuse, ALoadDoesNotMovePastAConflictingWrite) {
  const auto f = [](VmemRef<float, 64> x, VmemRef<float, 64> y) {
    auto v = x.load();
    x.store(full<float, 64>(0.0f));
    y.store(v * 2.0f);
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{64}, [](std::int64_t i) { return float(i); }));
  args.emplace_back(DType::f32, Shape{64});
  fused_matches_unfused(f, args);
  EXPECT_EQ(contents<float>(args[1])[10], 20.0f);
}

TEST(Fuse, PredicatesSelectAndIntegers) {
  const auto f = [](VmemRef<const std::int32_t, 1500> x, VmemRef<std::int32_t, 1500> y, VmemRef<bool, 1500> z) {
    auto v = x.load();
    y.store(select(v > 0, v * 3 - 7, -v % 5));
    z.store((v < 10) & (v > -10));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<std::int32_t>(Shape{1500}, [](std::int64_t i) {
    return static_cast<std::int32_t>((i * 7919) % 2001 - 1000 + (i == 3 ? -2147483647 : 0));
  }));
  args.emplace_back(DType::i32, Shape{1500});
  args.emplace_back(DType::pred, Shape{1500});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_GE(count_ops(g, "fused"), 2u);
}

TEST(Fuse, ScalarsAndLoopBodies) {
  const auto f = [](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y, SmemRef<std::int32_t> k) {
    auto idx = fori_loop(0, 8, [&](Scalar<std::int32_t> i, Scalar<std::int32_t> acc) {
      y.at(i).store(sqrt(abs(x.at(i).load() - 3.0f)) * 0.25f);
      return (acc * 3 + i) % 1000;
    }, Scalar<std::int32_t>(1));
    k.store(idx + 1);
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{8, 128}, [](std::int64_t i) { return float(i) * 0.37f; }));
  args.emplace_back(DType::f32, Shape{8, 128});
  args.emplace_back(DType::i32, Shape{});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_NE(to_text(g).find("fused[sub abs sqrt mul loads=1 store]"), std::string::npos) << to_text(g);
}

TEST(Fuse, FusedKernelsRunOnTheThreadedRuntime) {
  auto exe = kernel([](VmemRef<const float, 4096> x, VmemRef<float, 4096> y) {
               y.store(max(x.load() * 2.0f + float(1.0f), 0.0f));
             }).compile(Mesh{{"x", 4}});
  EXPECT_EQ(count_ops(exe.graph(), "fused"), 1u);
  auto x = Array::generate<float>(4, Shape{4096}, [](int d, std::int64_t i) { return float(i - 2048 + d); });
  auto out = exe(x);
  for (int d = 0; d < 4; ++d) {
    auto v = out[0].to_host<float>(d);
    EXPECT_EQ(v[100], 0.0f);
    EXPECT_EQ(v[3000], float(3000 - 2048 + d) * 2.0f + 1.0f);
  }
}

TEST(Fuse, MinElementsKeepsSmallChainsUnfused) {
  Graph g = trace([](VmemRef<float, 4> x) { x.store(x.load() * 2.0f + 1.0f); });
  passes::run_pipeline(g, no_fusion());
  passes::FuseOptions o;
  o.min_elements = 8;
  EXPECT_EQ(passes::fuse(g, o), 0u);
  EXPECT_EQ(passes::fuse(g), 1u);
  EXPECT_EQ(passes::fuse(g), 0u);  // nothing left to fuse
}

}  // namespace
