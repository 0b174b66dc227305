// Pipelines on devices with several cores (Grid::dimension_semantics,
// pipeline/cores.hpp): which grid points each core runs, results equal to
// the one-core run and to a host reference, Pallas' fetch rule applied per
// core, a grid without parallel dimensions on core 0 only, and a parallel
// dimension whose steps share an output block reported as the race it is.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include <refx/pipeline.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;
using I = std::int64_t;
using Points = std::vector<std::vector<I>>;

Points share(std::vector<I> dims, std::vector<DimensionSemantics> sem, int core, int cores) {
  return detail::core_share(detail::grid_points(dims), dims, sem, core, cores);
}

TEST(CoreShare, ParallelCombinationsAreCutIntoContiguousChunks) {
  // grid (3, 2), i parallel: i = 0, 1 on core 0 and i = 2 on core 1, j in order.
  EXPECT_EQ(share({3, 2}, {parallel, arbitrary}, 0, 2), (Points{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
  EXPECT_EQ(share({3, 2}, {parallel, arbitrary}, 1, 2), (Points{{2, 0}, {2, 1}}));
  // j parallel, i arbitrary: each core keeps its j's, for every i.
  EXPECT_EQ(share({2, 3}, {arbitrary, parallel}, 1, 2), (Points{{0, 2}, {1, 2}}));
  // Two parallel dimensions: their 4 combinations, 2 per core.
  EXPECT_EQ(share({2, 2, 2}, {parallel, parallel, arbitrary}, 1, 2),
            (Points{{1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}}));
  // No parallel dimension: core 0 runs everything.
  EXPECT_EQ(share({2}, {arbitrary}, 0, 2).size(), 2u);
  EXPECT_TRUE(share({2}, {arbitrary}, 1, 2).empty());
  // More cores than combinations: the last cores get none.
  EXPECT_EQ(share({2}, {parallel}, 1, 3), (Points{{1}}));
  EXPECT_TRUE(share({2}, {parallel}, 2, 3).empty());
  // Every point exactly once over the cores, 16 combinations on 3 cores: 6, 5, 5.
  std::size_t total = 0;
  for (int c = 0; c < 3; ++c) {
    const std::size_t n = share({4, 4, 2}, {parallel, parallel, arbitrary}, c, 3).size();
    EXPECT_EQ(n, c == 0 ? 12u : 10u) << c;
    total += n;
  }
  EXPECT_EQ(total, 32u);
}

constexpr I kM = 64, kK = 48, kN = 64, kBm = 16, kBk = 16, kBn = 16;

const auto matmul = pipeline_kernel<HbmRef<const float, kM, kK>, HbmRef<const float, kK, kN>, HbmRef<float, kM, kN>>(
    grid(kM / kBm, kN / kBn, kK / kBk).dimension_semantics(parallel, parallel, arbitrary),
    [](VmemRef<const float, kBm, kBk> ab, VmemRef<const float, kBk, kBn> bb, VmemRef<float, kBm, kBn> cb,
       VmemRef<float, kBm, kBn> acc) {
      if (program_id(2) == 0) acc.store(0.0f);
      acc += dot<float>(ab.load(), bb.load());
      if (program_id(2) == num_programs(2) - 1) cb.store(acc.load());
    },
    block<kBm, kBk>([](I i, I, I k) {
      return std::array{i, k};
    }),
    block<kBk, kBn>([](I, I j, I k) {
      return std::array{k, j};
    }),
    block<kBm, kBn>([](I i, I j, I) {
      return std::array{i, j};
    }),
    scratch<VmemRef<float, kBm, kBn>>());

float a_value(int d, I e) { return static_cast<float>((e * 7 + d) % 9 - 4); }
float b_value(int d, I e) { return static_cast<float>((e * 5 + 3 * d) % 7 - 3); }

class MegacoreMatmul : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Cores, MegacoreMatmul, ::testing::Values(2, 3, 4));

// The accumulator is per core and every core pipelines its own (i, j)
// blocks: C equals the one-core run and the exact product, with the race
// detector watching the cores share Hbm.
TEST_P(MegacoreMatmul, EqualsOneCoreAndTheHostReference) {
  Watchdog dog(kTestLimit, "megacore matmul");
  const int cores = GetParam(), devices = 2;
  // Checked mode: the race detector watches the cores share Hbm, and lazy
  // copies (run only when waited) expose a block read before it landed.
  Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true, .lazy_copies = true});
  const Executable many = kernel(matmul).compile(Mesh{{"x", devices}}.with_cores(cores), {}, rt);
  const Executable one = kernel(matmul).compile(Mesh{{"x", devices}}, {}, rt);
  const Array a = Array::generate<float>(devices, Shape{kM, kK}, a_value, rt);
  const Array b = Array::generate<float>(devices, Shape{kK, kN}, b_value, rt);
  const Array c_many = many(a, b)[0], c_one = one(a, b)[0];
  for (int d = 0; d < devices; ++d) {
    const auto got = c_many.to_host<float>(d), want = c_one.to_host<float>(d);
    EXPECT_EQ(got, want) << d;
    for (I i = 0; i < kM; ++i)
      for (I j = 0; j < kN; ++j) {
        double exact = 0;
        for (I p = 0; p < kK; ++p) exact += double(a_value(d, i * kK + p)) * b_value(d, p * kN + j);
        ASSERT_EQ(got[static_cast<std::size_t>(i * kN + j)], static_cast<float>(exact)) << d << " " << i << " " << j;
      }
  }
  // One report per core that ran a share: the steps add up to the grid.
  std::size_t steps = 0;
  for (const PipelineReport& r : many.pipeline_reports()) steps += r.steps;
  EXPECT_EQ(many.pipeline_reports().size(), static_cast<std::size_t>(cores));
  EXPECT_EQ(steps, one.pipeline_report().steps);
}

// Pallas' rule between a core's own consecutive steps: an input whose block
// never changes is fetched once per core (once in all on one core).
TEST(Megacore, FetchRuleAppliesPerCore) {
  const auto k = pipeline_kernel<HbmRef<const float, 1, 8>, HbmRef<float, 4, 8>>(
      grid(4).dimension_semantics(parallel),
      [](VmemRef<const float, 1, 8> xb, VmemRef<float, 1, 8> zb) { zb.store(xb.load() + 1.0f); }, block<1, 8>([](I) {
        return std::array{I{0}, I{0}};
      }),
      block<1, 8>([](I i) {
        return std::array{i, I{0}};
      }));
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable two = kernel(k).compile(Mesh{{"x", 1}}.with_cores(2), {}, rt);
  ASSERT_EQ(two.pipeline_reports().size(), 2u);
  for (const PipelineReport& r : two.pipeline_reports()) {
    EXPECT_EQ(r.steps, 2u);
    EXPECT_EQ(r.copies, (std::vector<int>{1, 2}));
  }
  EXPECT_EQ(kernel(k).compile(Mesh{{"x", 1}}, {}, rt).pipeline_report().copies, (std::vector<int>{1, 4}));
  const auto z = two(Array::generate<float>(1, Shape{1, 8}, tag, rt))[0].to_host<float>(0);
  for (I r = 0; r < 4; ++r)
    for (I c = 0; c < 8; ++c) EXPECT_EQ(z[static_cast<std::size_t>(r * 8 + c)], tag(0, c) + 1.0f);
}

// A grid without parallel dimensions runs on core 0; core 1 touches nothing
// (the race detector would see two cores write C otherwise).
TEST(Megacore, ArbitraryGridRunsOnCoreZero) {
  const auto k = pipeline_kernel<HbmRef<const float, 4, 8>, HbmRef<float, 4, 8>>(
      grid(4), [](VmemRef<const float, 1, 8> xb, VmemRef<float, 1, 8> zb) { zb.store(xb.load() * 2.0f); },
      block<1, 8>([](I i) {
        return std::array{i, I{0}};
      }),
      block<1, 8>([](I i) {
        return std::array{i, I{0}};
      }));
  Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true});
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}}.with_cores(2), {}, rt);
  EXPECT_EQ(exe.pipeline_reports().size(), 1u);
  const auto z = exe(Array::generate<float>(1, Shape{4, 8}, tag, rt))[0].to_host<float>(0);
  for (I e = 0; e < 32; ++e) EXPECT_EQ(z[static_cast<std::size_t>(e)], 2.0f * tag(0, e));
}

// Bad input: a parallel dimension whose steps write the same output block.
// Both cores write C's block 0 back without an order between them: the
// race detector reports it, naming both cores.
TEST(Megacore, ParallelStepsSharingAnOutputBlockAreARaceNamingBothCores) {
  if (kThreadSanitizer) GTEST_SKIP() << "plants a real data race (the detector's job), which ThreadSanitizer aborts on";
  Watchdog dog(kTestLimit, "parallel race");
  const auto k = pipeline_kernel<HbmRef<const float, 4, 8>, HbmRef<float, 1, 8>>(
      grid(4).dimension_semantics(parallel),
      [](VmemRef<const float, 1, 8> xb, VmemRef<float, 1, 8> zb) { zb.store(xb.load()); }, block<1, 8>([](I i) {
        return std::array{i, I{0}};
      }),
      block<1, 8>([](I) {
        return std::array{I{0}, I{0}};
      }));
  Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true});
  const Executable exe = kernel(k).name("shared_block").compile(Mesh{{"x", 1}}.with_cores(2), {}, rt);
  auto out = exe(Array::generate<float>(1, Shape{4, 8}, tag, rt));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("data race in kernel 'shared_block'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("copy write into device 0 core 0 (started by device 0 core 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("copy write into device 0 core 1 (started by device 0 core 1"), std::string::npos) << msg;
}

}  // namespace
