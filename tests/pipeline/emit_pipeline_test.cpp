// emit_pipeline inside a kernel: 1-D, 2-D and 3-D grids, index maps that
// repeat or skip blocks, revisited outputs (reductions over a grid axis),
// scratch accumulators, ring depths 1-3, each against a host reference; the
// copies Pallas' rules elide are counted in the traced graph and the report.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <refx/extend/graph_walk.hpp>
#include <refx/pipeline.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

namespace {
using namespace refx;

std::size_t dma_starts(const Graph& g) { return extend::count_ops(g, "dma_start"); }

const auto same = [](std::int64_t i) { return i; };

// z = x + 1 over a 1-D grid: the B.2 copy kernel shape, 4 fetches and 4 write-backs.
TEST(EmitPipeline, OneDimensionalAddOne) {
  PipelineReport report;
  const auto k = [&](HbmRef<const float, 64> x, HbmRef<float, 64> z) {
    report = emit_pipeline(grid(4), [](VmemRef<const float, 16> xb, VmemRef<float, 16> zb) {
      zb.store(xb.load() + 1.0f);
    })(in(x, block<16>(same)), out(z, block<16>(same)));
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", 2}});
  EXPECT_EQ(report.steps, 4u);
  EXPECT_EQ(report.copies, (std::vector<int>{4, 4}));
  EXPECT_EQ(dma_starts(exe.graph()), 8u);
  const auto out = exe(Array::generate<float>(2, Shape{64}, [](int d, std::int64_t i) { return float(100 * d + i); }));
  for (int d = 0; d < 2; ++d) {
    const auto z = out[0].to_host<float>(d);
    for (std::int64_t i = 0; i < 64; ++i) EXPECT_EQ(z[static_cast<std::size_t>(i)], float(100 * d + i + 1)) << i;
  }
}

// Checklist E.2: each (2,3) block of an (8,6) output holds 10*i + j.
TEST(EmitPipeline, TwoDimensionalProgramIds) {
  const auto k = [](HbmRef<float, 8, 6> o) {
    emit_pipeline(grid(4, 2), [](VmemRef<float, 2, 3> ob) {
      ob.store(static_cast<float>(10 * program_id(0) + program_id(1)));
    })(out(o, block<2, 3>([](std::int64_t i, std::int64_t j) { return std::array{i, j}; })));
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}});
  const auto o = exe()[0].to_host<float>(0);
  for (std::int64_t r = 0; r < 8; ++r)
    for (std::int64_t c = 0; c < 6; ++c) EXPECT_EQ(o[static_cast<std::size_t>(r * 6 + c)], float(10 * (r / 2) + c / 3));
}

// Checklist E.8: in map 0,0,0,0,1,1,1,1 -> 2 fetches; out with the same map -> 2 write-backs.
TEST(EmitPipeline, RepeatedBlocksAreNotCopiedAgain) {
  PipelineReport report;
  const auto k = [&](HbmRef<const std::int32_t, 2, 8> x, HbmRef<std::int32_t, 2, 8> z) {
    const auto half = [](std::int64_t i) { return std::array{i / 4, std::int64_t{0}}; };
    report = emit_pipeline(grid(8), [](VmemRef<const std::int32_t, 1, 8> xb, VmemRef<std::int32_t, 1, 8> zb) {
      if (program_id(0) % 4 == 0) zb.store(xb.load());
      else zb.store(zb.load() + xb.load());  // the output window persists within a run
    })(in(x, block<1, 8>(half)), out(z, block<1, 8>(half)));
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}});
  EXPECT_EQ(report.copies, (std::vector<int>{2, 2}));
  EXPECT_EQ(dma_starts(exe.graph()), 4u);
  const auto z = exe(Array::generate<std::int32_t>(1, Shape{2, 8}, [](int, std::int64_t i) { return std::int32_t(i); }))[0]
                     .to_host<std::int32_t>(0);
  for (std::int64_t i = 0; i < 16; ++i) EXPECT_EQ(z[static_cast<std::size_t>(i)], 4 * i) << i;
}

// An index map that skips blocks: z block i = x block 2i + 1 (x blocks 0, 2, ... are never copied).
TEST(EmitPipeline, SkippedBlocks) {
  PipelineReport report;
  const auto k = [&](HbmRef<const float, 80> x, HbmRef<float, 40> z) {
    report = emit_pipeline(grid(4), [](VmemRef<const float, 10> xb, VmemRef<float, 10> zb) { zb.store(xb.load() * 2.0f); })(
        in(x, block<10>([](std::int64_t i) { return 2 * i + 1; })), out(z, block<10>(same)));
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}});
  EXPECT_EQ(report.copies, (std::vector<int>{4, 4}));
  const auto z = exe(Array::generate<float>(1, Shape{80}, [](int, std::int64_t i) { return float(i); }))[0].to_host<float>(0);
  for (std::int64_t i = 0; i < 40; ++i) EXPECT_EQ(z[static_cast<std::size_t>(i)], 2.0f * float((i / 10) * 20 + 10 + i % 10)) << i;
}

// Checklist E.10/E.20: a 3-D grid (i, j, k) matmul, k innermost, an f32
// accumulator in scratch, the output written back once per (i, j).
TEST(EmitPipeline, ThreeDimensionalMatmulWithScratchAccumulator) {
  constexpr std::int64_t M = 32, K = 48, N = 16, bm = 16, bk = 16, bn = 8;
  PipelineReport report;
  const auto k = [&](HbmRef<const float, M, K> a, HbmRef<const float, K, N> b, HbmRef<float, M, N> c) {
    using I = std::int64_t;
    report = emit_pipeline(grid(M / bm, N / bn, K / bk),
                           [](VmemRef<const float, bm, bk> ab, VmemRef<const float, bk, bn> bb, VmemRef<float, bm, bn> cb,
                              VmemRef<float, bm, bn> acc) {
                             if (program_id(2) == 0) acc.store(0.0f);
                             acc += dot(ab.load(), bb.load());
                             if (program_id(2) == num_programs(2) - 1) cb.store(acc.load());
                           })(in(a, block<bm, bk>([](I i, I, I kk) { return std::array{i, kk}; })),
                              in(b, block<bk, bn>([](I, I j, I kk) { return std::array{kk, j}; })),
                              out(c, block<bm, bn>([](I i, I j, I) { return std::array{i, j}; })),
                              scratch<VmemRef<float, bm, bn>>());
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}});
  EXPECT_EQ(report.steps, 12u);
  // a's block changes every step (k innermost) except ... never repeats consecutively: 12 fetches; c: 4 write-backs.
  EXPECT_EQ(report.copies, (std::vector<int>{12, 12, 4, 0}));
  const auto av = [](int, std::int64_t i) { return float(i % 7 - 3); };
  const auto bv = [](int, std::int64_t i) { return float(i % 5 - 2); };
  const auto c = exe(Array::generate<float>(1, Shape{M, K}, av), Array::generate<float>(1, Shape{K, N}, bv))[0].to_host<float>(0);
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float want = 0;
      for (std::int64_t p = 0; p < K; ++p) want += av(0, i * K + p) * bv(0, p * N + j);
      EXPECT_EQ(c[static_cast<std::size_t>(i * N + j)], want) << i << "," << j;
    }
}

// Ring depths 1, 2, 3 for the input; 1 and 2 for the output: same result,
// and with depth n the prologue fetches n - 1 blocks.
TEST(EmitPipeline, RingDepths) {
  for (int depth_in : {1, 2, 3})
    for (int depth_out : {1, 2}) {
      const auto k = [&](HbmRef<const float, 6, 32> x, HbmRef<float, 6, 32> z) {
        const auto row = [](std::int64_t i) { return std::array{i, std::int64_t{0}}; };
        emit_pipeline(grid(6), [](VmemRef<const float, 1, 32> xb, VmemRef<float, 1, 32> zb) {
          zb.store(xb.load() * xb.load());
        })(in(x, block<1, 32>(row).buffered(depth_in)), out(z, block<1, 32>(row).buffered(depth_out)));
      };
      const Executable exe = kernel(k).compile(Mesh{{"x", 2}});
      const auto z =
          exe(Array::generate<float>(2, Shape{6, 32}, [](int d, std::int64_t i) { return float(i - 50 * d); }))[0];
      for (int d = 0; d < 2; ++d) {
        const auto v = z.to_host<float>(d);
        for (std::int64_t i = 0; i < 6 * 32; ++i)
          EXPECT_EQ(v[static_cast<std::size_t>(i)], float((i - 50 * d) * (i - 50 * d))) << depth_in << depth_out << i;
      }
    }
}


// pl.Buffered(2, use_lookahead=True): x's block i / 4 changes every 4 steps.
// Without lookahead block 1 is fetched at step 3, the step before its
// first use; with it at step 0, as soon as a slot is free. The traced
// order shows it: x's second fetch comes before step 0's body (each body
// starts with a delay) only with lookahead. The values are the same, in an
// unrolled and in a rolled grid (which fetches one step ahead either way).
TEST(EmitPipeline, LookaheadFetchesTheNextDistinctBlockAsSoonAsASlotIsFree) {
  const auto quarter = [](auto i) { return std::tuple{i / 4, std::int64_t{0}}; };
  const auto row = [](auto i) { return std::tuple{i, std::int64_t{0}}; };
  const auto body = [](VmemRef<const float, 1, 32> xb, VmemRef<float, 1, 32> zb) {
    delay(1);
    zb.store(xb.load() + 1.0f);
  };
  for (const bool ahead : {false, true})
    for (const bool rolled : {false, true}) {
      const auto k = [&](HbmRef<const float, 4, 32> x, HbmRef<float, 16, 32> z) {
        const auto spec = ahead ? block<1, 32>(quarter).buffered(2, lookahead) : block<1, 32>(quarter).buffered(2);
        if (rolled) emit_pipeline(grid(16).rolled(), body)(in(x, spec), out(z, block<1, 32>(row)));
        else emit_pipeline(grid(16).unrolled(), body)(in(x, spec), out(z, block<1, 32>(row)));
      };
      const Executable exe = kernel(k).compile(Mesh{{"x", 1}});
      if (!rolled) {
        const std::string text = to_text(trace(k));  // as traced, before refx's passes reorder it
        const std::size_t first = text.find("dma_start");
        ASSERT_NE(first, std::string::npos) << text;
        EXPECT_EQ(text.find("dma_start", first + 1) < text.find("delay"), ahead) << text;
        // refx's passes keep the order (the body is a fused add there).
        const std::string passed = to_text(exe.graph());
        const std::size_t fetch = passed.find("dma_start");
        EXPECT_EQ(passed.find("] a[1:2, :] c[1", fetch) < passed.find("fused"), ahead) << passed;
      }
      const auto z = exe(Array::generate<float>(1, Shape{4, 32}, [](int, std::int64_t e) { return float(e); }))[0]
                         .to_host<float>(0);
      for (std::int64_t e = 0; e < 16 * 32; ++e)
        ASSERT_EQ(z[static_cast<std::size_t>(e)], float((e / 128) * 32 + e % 32) + 1.0f) << ahead << rolled << e;
    }
}
}  // namespace
