// Fusion of a load into the reduction that is its only use: the reduction
// reads the Ref in place (no copy of the region), gives bit-identical
// results, and never reads the Ref later than the load would have when
// something in between writes it. Also the reductions' own loops: 32 partial
// sums, and max / min that run without NaN tests first and again exactly
// when a NaN (or infinities of both signs) is among the elements.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "support/graph_testing.hpp"
#include "support/runtime_testing.hpp"
#include <refx/runtime/runtime.hpp>

using namespace refx;
using namespace refx::testing;
using namespace refx::graph_testing;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();


std::size_t loads_in(const Graph& g) { return live_ops(g, "load"); }

float host_max(const std::vector<float>& v, std::size_t from, std::size_t n, std::size_t step) {
  float m = -inf;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = v[from + i * step];
    if (std::isnan(x)) return x;
    m = std::max(m, x);
  }
  return m;
}

TEST(FuseReduce, ReductionsOfLoadedRefsReadTheRefAndMatchUnfused) {
  constexpr std::int64_t r = 37, c = 301;  // not multiples of the 32 lanes
  const auto f = [](VmemRef<const float, r, c> x, VmemRef<float, c> s0, VmemRef<float, r> s1, VmemRef<float, c> m0,
                    VmemRef<float, r> m1, VmemRef<float, r> n1) {
    s0.store(reduce_sum<0>(x.load()));
    s1.store(reduce_sum<1>(x.load()));
    m0.store(reduce_max<0>(x.load()));
    m1.store(reduce_max<1>(x.load()));
    n1.store(reduce_min<1>(x.load()));
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  std::vector<float> data(r * c);
  for (auto& v : data) v = u(rng);
  data[5 * c + 17] = nan_f;   // row 5, column 17
  data[9 * c + 3] = inf;      // row 9 holds both infinities: the watching sum is NaN, the max is inf
  data[9 * c + 250] = -inf;
  std::vector<Buffer> args;
  args.push_back(refx::testing::make_buffer<float>(Shape{r, c}, data));
  args.emplace_back(DType::f32, Shape{c});
  args.emplace_back(DType::f32, Shape{r});
  args.emplace_back(DType::f32, Shape{c});
  args.emplace_back(DType::f32, Shape{r});
  args.emplace_back(DType::f32, Shape{r});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_EQ(loads_in(g), 0u) << to_text(g);
  EXPECT_EQ(live_ops(g, "reduce_sum"), 2u);
  const auto m1 = contents<float>(args[4]), n1 = contents<float>(args[5]), m0 = contents<float>(args[3]);
  for (std::int64_t i = 0; i < r; ++i) {
    const float want = host_max(data, static_cast<std::size_t>(i * c), c, 1);
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(m1[static_cast<std::size_t>(i)])) << i;
    else EXPECT_EQ(m1[static_cast<std::size_t>(i)], want) << i;
  }
  EXPECT_EQ(m1[9], inf);
  EXPECT_EQ(n1[9], -inf);
  EXPECT_TRUE(std::isnan(n1[5]));
  for (std::int64_t j = 0; j < c; ++j) {
    const float want = host_max(data, static_cast<std::size_t>(j), r, c);
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(m0[static_cast<std::size_t>(j)])) << j;
    else EXPECT_EQ(m0[static_cast<std::size_t>(j)], want) << j;
  }
  EXPECT_TRUE(std::isnan(m0[17]));
  EXPECT_EQ(m0[3], inf);
  // Row 0 summed by hand in the documented order: element k into partial sum
  // k mod 32, then the partial sums pairwise, halving.
  float part[32] = {};
  for (std::int64_t k = 0; k < c; ++k) part[k % 32] += data[static_cast<std::size_t>(k)];
  for (int w = 16; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) part[l] += part[l + w];
  EXPECT_EQ(contents<float>(args[2])[0], part[0]);
}

TEST(FuseReduce, StridedAndOffsetViewsAreReadCorrectly) {
  const auto f = [](VmemRef<const float, 40, 64> x, VmemRef<float, 10> a, VmemRef<float, 16> b) {
    a.store(reduce_sum<1>(x.at(ds<10>(3, 4), ds<16>(5, 2)).load()));  // strided: gathered
    b.store(reduce_max<0>(x.at(ds<4>(8), ds<16>(0)).load()));        // rows 8..11, columns 0..15: strided rows
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{40, 64}, [](std::int64_t i) { return float((i * 37) % 101) - 50.0f; }));
  args.emplace_back(DType::f32, Shape{10});
  args.emplace_back(DType::f32, Shape{16});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_EQ(loads_in(g), 0u) << to_text(g);
  const auto x = contents<float>(args[0]);
  float want = 0;
  for (int j = 0; j < 16; ++j) want += x[static_cast<std::size_t>((3 + 4 * 2) * 64 + 5 + 2 * j)];  // row i = 2
  EXPECT_EQ(contents<float>(args[1])[2], want);
  EXPECT_EQ(contents<float>(args[2])[7], host_max(x, 8 * 64 + 7, 4, 64));
}

TEST(FuseReduce, AReductionDoesNotReadARefWrittenAfterTheLoad) {
  const auto f = [](VmemRef<float, 8, 64> x, VmemRef<float, 8> y) {
    auto v = x.load();
    x.store(full<float, 8, 64>(1.0f));
    y.store(reduce_sum<1>(v));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{8, 64}, [](std::int64_t i) { return float(i); }));
  args.emplace_back(DType::f32, Shape{8});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_EQ(loads_in(g), 1u) << to_text(g);  // the load stays before the store
  float want = 0;
  for (int k = 0; k < 64; ++k) want += float(64 * 3 + k);
  EXPECT_EQ(contents<float>(args[1])[3], want);
  EXPECT_EQ(contents<float>(args[0])[100], 1.0f);
}

TEST(FuseReduce, AWriteOfAnotherRegionInBetweenDoesNotPreventFusion) {
  const auto f = [](VmemRef<float, 8, 64> x, VmemRef<float, 4> y) {
    auto v = x.at(ds<4>(0)).load();
    x.at(ds<4>(4)).store(full<float, 4, 64>(1.0f));
    y.store(reduce_max<1>(v));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{8, 64}, [](std::int64_t i) { return float(i); }));
  args.emplace_back(DType::f32, Shape{4});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_EQ(loads_in(g), 0u) << to_text(g);
  EXPECT_EQ(contents<float>(args[1])[2], float(2 * 64 + 63));
}

TEST(FuseReduce, ALoadWithOtherUsesIsNotFused) {
  const auto f = [](VmemRef<const float, 4, 32> x, VmemRef<float, 4> y, VmemRef<float, 4, 32> z) {
    auto v = x.load();
    y.store(reduce_sum<1>(v));
    z.store(v * 2.0f);
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{4, 32}, [](std::int64_t i) { return float(i % 9); }));
  args.emplace_back(DType::f32, Shape{4});
  args.emplace_back(DType::f32, Shape{4, 32});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_EQ(loads_in(g), 1u) << to_text(g);
}

TEST(FuseReduce, HalfFloatsAndIntegers) {
  const auto f = [](VmemRef<const bf16, 6, 100> h, VmemRef<bf16, 6> hs, VmemRef<const std::int32_t, 3, 70> i,
                    VmemRef<std::int32_t, 70> is, VmemRef<std::int32_t, 3> im) {
    hs.store(reduce_sum<1>(h.load()));
    is.store(reduce_sum<0>(i.load()));
    im.store(reduce_min<1>(i.load()));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<bf16>(Shape{6, 100}, [](std::int64_t k) { return bf16(float(k % 7) * 0.5f); }));
  args.emplace_back(DType::bf16, Shape{6});
  args.push_back(make_buffer_fn<std::int32_t>(Shape{3, 70}, [](std::int64_t k) {
    return static_cast<std::int32_t>((k * 13) % 41 - 20);
  }));
  args.emplace_back(DType::i32, Shape{70});
  args.emplace_back(DType::i32, Shape{3});
  Graph g = fused_matches_unfused(f, args);
  EXPECT_EQ(loads_in(g), 0u) << to_text(g);
  const auto in = contents<std::int32_t>(args[2]);
  EXPECT_EQ(contents<std::int32_t>(args[3])[5], in[5] + in[75] + in[145]);
  EXPECT_EQ(contents<std::int32_t>(args[4])[1], *std::min_element(in.begin() + 70, in.begin() + 140));
  float want = 0;
  for (int k = 0; k < 100; ++k) want += float((100 + k) % 7) * 0.5f;  // exact in f32
  EXPECT_EQ(static_cast<float>(contents<bf16>(args[1])[1]), static_cast<float>(bf16(want)));
}

TEST(FuseReduce, RunsOnTheThreadedRuntimeOnEveryDevice) {
  auto exe = kernel([](VmemRef<const float, 64, 128> x, VmemRef<float, 128> y, VmemRef<float, 64> z) {
               y.store(reduce_sum<0>(x.load()));
               z.store(reduce_max<1>(x.load()));
             }).compile(Mesh{{"x", 2}});
  auto x = Array::generate<float>(2, Shape{64, 128}, [](int d, std::int64_t i) { return float(i % 128 + d); });
  auto out = exe(x);
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(out[0].to_host<float>(d)[10], float(64 * (10 + d)));
    EXPECT_EQ(out[1].to_host<float>(d)[5], float(127 + d));
  }
}

// The fused reduction carries the load's Read effect: the race detector sees
// a reduction of a copy's destination before the copy's wait, at the
// reduction's line.
TEST(FuseReduce, AFusedReductionIsCheckedForRacesLikeALoad) {
  if (refx::testing::kThreadSanitizer) GTEST_SKIP() << "plants a real data race, which ThreadSanitizer aborts on";
  Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true});
  int line = 0;
  auto exe = kernel([&line](HbmRef<const float, 4, 256> x, VmemRef<float, 256> y) {
               run_scoped([&](VmemRef<float, 4, 256> tmp, DmaSemaphore sem) {
                 auto c = make_async_copy(x, tmp, sem);
                 c.start();
                 line = __LINE__; y.store(reduce_sum<0>(tmp.load()));  // too early
                 c.wait();
               });
             })
                 .name("early_reduce")
                 .passes(refx::testing::unverified())
                 .compile(Mesh{{"x", 1}}, {}, rt);
  EXPECT_EQ(live_ops(exe.graph(), "load"), 0u) << to_text(exe.graph());
  auto x = Array::generate<float>(1, Shape{4, 256}, [](int, std::int64_t i) { return float(i); }, rt);
  auto out = exe(x);
  const std::string msg = refx::testing::runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("data race in kernel 'early_reduce'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(refx::testing::here(__FILE__, line)), std::string::npos) << msg;
}

}  // namespace
