// Rolled grids: a pipeline whose grid is traced as one loop. Each kernel runs
// rolled and unrolled; results must be identical and the copies the runtime
// ran (Runtime::totals) must equal Pallas' rule counted on the host (an input
// fetched where its block index differs from the step before, an output
// written back once per run of equal indices). The graph of a rolled grid
// does not grow with its step count.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <refx/pipeline.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

namespace {
using namespace refx;
using I = std::int64_t;
using i32 = std::int32_t;

/// Pallas' rule on the host: runs of equal block indices along the steps.
int runs(const std::vector<std::vector<I>>& index) {
  int n = 0;
  for (std::size_t s = 0; s < index.size(); ++s) n += s == 0 || index[s] != index[s - 1];
  return n;
}

/// The copies the runtime ran for one call, and the outputs.
template <class... A>
std::pair<std::int64_t, std::vector<float>> run_counting(Runtime& rt, const Executable& exe, const A&... inputs) {
  const std::int64_t before = rt.totals().copies;
  const std::vector<float> out = exe(inputs...)[0].template to_host<float>(0);
  return {rt.totals().copies - before, out};
}

float aval(int, std::int64_t i) { return float(i % 7 - 3); }
float bval(int, std::int64_t i) { return float(i % 5 - 2); }

constexpr I M = 32, K = 48, N = 16, bm = 16, bk = 16, bn = 8;

// [snippet:rolled-matmul]
/// C = A B over a (i, j, k) grid, k innermost: A's and B's blocks change at
/// every step, C's block is revisited along k (written back once per (i, j)).
/// The maps take `auto` indices and the body reads its grid point with
/// traced_program_id, so the kernel runs rolled or unrolled.
template <class G>
auto matmul(G g, int a_buffers = 2, int b_buffers = 2, int c_buffers = 2) {
  return pipeline_kernel<HbmRef<const float, M, K>, HbmRef<const float, K, N>, HbmRef<float, M, N>>(
      g,
      [](VmemRef<const float, bm, bk> ab, VmemRef<const float, bk, bn> bb, VmemRef<float, bm, bn> cb,
         VmemRef<float, bm, bn> acc) {
        const auto kk = traced_program_id(2);
        when(kk == 0, [&] { acc.store(0.0f); });
        acc += dot(ab.load(), bb.load());
        when(kk == num_programs(2) - 1, [&] { cb.store(acc.load()); });
      },
      block<bm, bk>([](auto i, auto, auto kk) {
        return std::tuple{i, kk};
      }).buffered(a_buffers),
      block<bk, bn>([](auto, auto j, auto kk) {
        return std::tuple{kk, j};
      }).buffered(b_buffers),
      block<bm, bn>([](auto i, auto j, auto) {
        return std::tuple{i, j};
      }).buffered(c_buffers),
      scratch<VmemRef<float, bm, bn>>());
}
// [/snippet]

/// Pallas' copy count of the matmul: every step fetches A's and B's blocks
/// (k changes at every step), C is written back once per (i, j).
int matmul_copies() {
  std::vector<std::vector<I>> a, b, c;
  for (I i = 0; i < M / bm; ++i)
    for (I j = 0; j < N / bn; ++j)
      for (I kk = 0; kk < K / bk; ++kk) {
        a.push_back({i, kk});
        b.push_back({kk, j});
        c.push_back({i, j});
      }
  return runs(a) + runs(b) + runs(c);
}

std::vector<float> matmul_reference() {
  std::vector<float> c(static_cast<std::size_t>(M * N));
  for (I i = 0; i < M; ++i)
    for (I j = 0; j < N; ++j) {
      float want = 0;
      for (I p = 0; p < K; ++p) want += aval(0, i * K + p) * bval(0, p * N + j);
      c[static_cast<std::size_t>(i * N + j)] = want;
    }
  return c;
}

TEST(RolledGrid, MatmulMatchesUnrolledAndPallasCopyCount) {
  for (const auto& [a, b, c] : {std::tuple{2, 2, 2}, std::tuple{1, 3, 1}, std::tuple{3, 1, 2}}) {
    Runtime rt(RuntimeOptions{.workers = 2});
    const Executable rolled =
        kernel(matmul(grid(M / bm, N / bn, K / bk).rolled(), a, b, c)).compile(Mesh{{"x", 1}}, {}, rt);
    const Executable unrolled =
        kernel(matmul(grid(M / bm, N / bn, K / bk).unrolled(), a, b, c)).compile(Mesh{{"x", 1}}, {}, rt);
    EXPECT_TRUE(rolled.pipeline_report().rolled);
    EXPECT_FALSE(unrolled.pipeline_report().rolled);
    const Array av = Array::generate<float>(1, Shape{M, K}, aval, rt),
                bv = Array::generate<float>(1, Shape{K, N}, bval, rt);
    const auto [rolled_copies, rolled_c] = run_counting(rt, rolled, av, bv);
    const auto [unrolled_copies, unrolled_c] = run_counting(rt, unrolled, av, bv);
    const std::string at = "buffers " + std::to_string(a) + std::to_string(b) + std::to_string(c);
    EXPECT_EQ(rolled_c, matmul_reference()) << at;
    EXPECT_EQ(rolled_c, unrolled_c) << at;
    EXPECT_EQ(rolled_copies, matmul_copies()) << at;
    EXPECT_EQ(unrolled_copies, matmul_copies()) << at;
  }
}

// The checked modes (race detector, lazy copies) follow every copy that ran
// in the rolled loop: no report, the same result.
TEST(RolledGrid, MatmulInCheckedModes) {
  for (const RuntimeOptions& o : {RuntimeOptions{.detect_races = true}, RuntimeOptions{.lazy_copies = true}}) {
    Runtime rt(o);
    const Executable exe =
        kernel(matmul(grid(M / bm, N / bn, K / bk).rolled(), 3, 2, 2)).compile(Mesh{{"x", 1}}, {}, rt);
    const auto [copies, c] = run_counting(rt, exe, Array::generate<float>(1, Shape{M, K}, aval, rt),
                                          Array::generate<float>(1, Shape{K, N}, bval, rt));
    EXPECT_EQ(c, matmul_reference()) << "lazy " << o.lazy_copies;
    EXPECT_EQ(copies, matmul_copies()) << "lazy " << o.lazy_copies;
  }
}

// Cores share a rolled grid as they share an unrolled one
// (dimension_semantics): each core loops over its contiguous range of steps,
// with Pallas' rule between its own consecutive steps. The race detector and
// lazy copies watch the cores share Hbm.
TEST(RolledGrid, CoresLoopOverTheirShareOfTheSteps) {
  const auto semantics = [](auto g) { return g.dimension_semantics(parallel, parallel, arbitrary); };
  for (const int cores : {2, 3}) {
    Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true, .lazy_copies = true});
    const Mesh mesh = Mesh{{"x", 1}}.with_cores(cores);
    const Executable rolled = kernel(matmul(semantics(grid(M / bm, N / bn, K / bk).rolled()))).compile(mesh, {}, rt);
    const Executable unrolled =
        kernel(matmul(semantics(grid(M / bm, N / bn, K / bk).unrolled()))).compile(mesh, {}, rt);
    const Array av = Array::generate<float>(1, Shape{M, K}, aval, rt),
                bv = Array::generate<float>(1, Shape{K, N}, bval, rt);
    const auto [rolled_copies, rolled_c] = run_counting(rt, rolled, av, bv);
    const auto [unrolled_copies, unrolled_c] = run_counting(rt, unrolled, av, bv);
    EXPECT_EQ(rolled_c, matmul_reference()) << cores;
    EXPECT_EQ(rolled_copies, unrolled_copies) << cores;
    // One rolled report per core with steps (4 (i, j) pairs over the cores), adding up to the grid.
    std::size_t steps = 0;
    for (const PipelineReport& r : rolled.pipeline_reports()) {
      EXPECT_TRUE(r.rolled);
      steps += r.steps;
    }
    EXPECT_EQ(rolled.pipeline_reports().size(), static_cast<std::size_t>(cores)) << cores;
    EXPECT_EQ(steps, static_cast<std::size_t>(M / bm * N / bn * K / bk)) << cores;
  }
  // An arbitrary dimension before a parallel one: a core's share is not one
  // range of steps. An automatic grid stays unrolled; a rolled one is refused.
  const Mesh two = Mesh{{"x", 1}}.with_cores(2);
  const auto rows = [](auto g) {  // 300 steps: an automatic grid would roll
    return pipeline_kernel<HbmRef<const float, 300, 8>, HbmRef<float, 300, 8>>(
        g.dimension_semantics(arbitrary, parallel),
        [](VmemRef<const float, 1, 8> x, VmemRef<float, 1, 8> z) { z.store(x.load()); },
        block<1, 8>([](auto i, auto j) {
          return std::tuple{i * 100 + j, 0};
        }),
        block<1, 8>([](auto i, auto j) {
          return std::tuple{i * 100 + j, 0};
        }));
  };
  const Executable fallback = kernel(rows(grid(3, 100))).compile(two);
  ASSERT_EQ(fallback.pipeline_reports().size(), 2u);
  EXPECT_FALSE(fallback.pipeline_reports()[0].rolled);
  const Array x = Array::generate<float>(1, Shape{300, 8}, aval);
  EXPECT_EQ(fallback(x)[0].to_host<float>(0), x.to_host<float>(0));
  try {
    (void)kernel(rows(grid(3, 100).rolled())).compile(two);
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("its parallel dimensions come before its arbitrary ones"), std::string::npos)
        << e.what();
  }
}

// Scalar prefetch in a rolled grid: step i fetches x's row table[i]; rows
// repeated at consecutive steps are not fetched again.
constexpr I kRows = 4, kCols = 32, kSteps = 300;
auto gather(int buffers) {
  return pipeline_kernel<SmemRef<const i32, kSteps>, HbmRef<const float, kRows, kCols>, HbmRef<float, kSteps, kCols>>(
      grid(kSteps),  // above rolled_grid_threshold: rolled by default
      [](SmemRef<const i32, kSteps>, VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> zb) {
        zb.store(xb.load() * 2.0f);
      },
      block<1, kCols>([](auto i, SmemRef<const i32, kSteps> table) {
        return std::tuple{table.at(i).load(), 0};
      }).buffered(buffers),
      block<1, kCols>([](auto i, SmemRef<const i32, kSteps>) {
        return std::tuple{i, 0};
      }));
}

TEST(RolledGrid, ScalarPrefetchRolledByDefault) {
  for (const int buffers : {1, 2, 3}) {
    Runtime rt(RuntimeOptions{.workers = 2});
    const Executable exe = kernel(gather(buffers)).compile(Mesh{{"x", 1}}, {}, rt);
    EXPECT_TRUE(exe.pipeline_report().rolled);
    EXPECT_EQ(exe.pipeline_report().steps, std::size_t(kSteps));
    const Array x = Array::generate<float>(
        1, Shape{kRows, kCols}, [](int, std::int64_t e) { return float(e % 97); }, rt);
    std::vector<i32> table(kSteps);
    for (std::size_t s = 0; s < table.size(); ++s) table[s] = i32((s / 3 + s / 7) % kRows);
    std::vector<std::vector<I>> rows;
    for (const i32 r : table) rows.push_back({r});
    const auto [copies, z] = run_counting(rt, exe, Array::from_shards<i32>({table}, Shape{kSteps}, rt), x);
    EXPECT_EQ(copies, runs(rows) + kSteps) << "buffers " << buffers;
    for (I r = 0; r < kSteps; ++r)
      ASSERT_EQ(z[static_cast<std::size_t>(r * kCols + 3)], 2.0f * float((table[std::size_t(r)] * kCols + 3) % 97))
          << r << " buffers " << buffers;
  }
}

// Bad input: an index map reading a scalar operand out of its range at a
// traced position (step i reads table[i + 1]: past the end at the last
// step) is a run-time error naming the operand, never a read past the table.
// (The line it names is the pipeline's: pipeline_kernel's, inside refx.)
TEST(RolledGrid, ScalarOperandReadOutOfRangeNamesTheOperand) {
  const auto k =
      pipeline_kernel<SmemRef<const i32, kSteps>, HbmRef<const float, kRows, kCols>, HbmRef<float, kSteps, kCols>>(
          grid(kSteps).rolled(),
          [](SmemRef<const i32, kSteps>, VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> zb) {
            zb.store(xb.load());
          },
          block<1, kCols>([](auto i, SmemRef<const i32, kSteps> table) {
            return std::tuple{table.at(i + 1).load(), 0};
          }),
          block<1, kCols>([](auto i, SmemRef<const i32, kSteps>) {
            return std::tuple{i, 0};
          }));
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
  ASSERT_TRUE(exe.pipeline_report().rolled);
  const Array x = Array::generate<float>(1, Shape{kRows, kCols}, aval, rt);
  try {
    (void)exe(Array::from_shards<i32>({std::vector<i32>(kSteps, 1)}, Shape{kSteps}, rt), x)[0].to_host<float>(0);
    ADD_FAILURE() << "no error";
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("pipeline_kernel: the index map of operand 0 (input) reads scalar operand 0 (shape [300]) out of "
                       "its range at a step of a rolled grid (grid(...).unrolled() names the step): index 300"),
              std::string::npos)
        << msg;
  }
}

// A long 1-D grid whose output block is revisited (z's block r / 8 for step
// r): rolled by default above the threshold, the same as unrolled.
template <class G>
auto segment_sums(G g) {
  constexpr I steps = 512, cols = 128;
  return pipeline_kernel<HbmRef<const float, steps, cols>, HbmRef<float, steps / 8, cols>>(
      g,
      [](VmemRef<const float, 1, cols> xb, VmemRef<float, 1, cols> zb) {
        when(traced_program_id(0) % 8 == 0, [&] { zb.store(0.0f); });
        zb += xb.load();
      },
      block<1, cols>([](auto r) {
        return std::tuple{r, 0};
      }),
      block<1, cols>([](auto r) {
        return std::tuple{r / 8, 0};
      }));
}

TEST(RolledGrid, RevisitedOutputAboveTheThreshold) {
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable rolled = kernel(segment_sums(grid(512))).compile(Mesh{{"x", 1}}, {}, rt);
  const Executable unrolled = kernel(segment_sums(grid(512).unrolled())).compile(Mesh{{"x", 1}}, {}, rt);
  EXPECT_TRUE(rolled.pipeline_report().rolled);
  const Array x = Array::generate<float>(
      1, Shape{512, 128}, [](int, std::int64_t e) { return float(e % 13); }, rt);
  const auto [rc, rz] = run_counting(rt, rolled, x);
  const auto [uc, uz] = run_counting(rt, unrolled, x);
  EXPECT_EQ(rz, uz);
  EXPECT_EQ(rc, 512 + 512 / 8);
  EXPECT_EQ(uc, 512 + 512 / 8);
  for (I r = 0; r < 512 / 8; ++r) {
    float want = 0;
    for (I s = r * 8; s < r * 8 + 8; ++s) want += float((s * 128 + 5) % 13);
    ASSERT_EQ(rz[std::size_t(r * 128 + 5)], want) << r;
  }
}

// Which grids roll by default: more than rolled_grid_threshold steps, maps
// taking `auto` indices, blocks dividing their operands.
TEST(RolledGrid, DefaultRollsOnlyLongGridsThatCan) {
  const auto copy_kernel = [](auto g, auto map) {
    return pipeline_kernel<HbmRef<const float, 300, 8>, HbmRef<float, 300, 8>>(
        g, [](VmemRef<const float, 1, 8> x, VmemRef<float, 1, 8> z) { z.store(x.load()); }, block<1, 8>(map),
        block<1, 8>(map));
  };
  const auto generic = [](auto i) { return std::tuple{i, 0}; };
  const auto typed = [](I i) { return std::tuple{i, I{0}}; };
  EXPECT_TRUE(kernel(copy_kernel(grid(300), generic)).compile(Mesh{{"x", 1}}).pipeline_report().rolled);
  EXPECT_FALSE(kernel(copy_kernel(grid(300), typed)).compile(Mesh{{"x", 1}}).pipeline_report().rolled);
  const auto short_kernel = pipeline_kernel<HbmRef<const float, 256, 8>, HbmRef<float, 256, 8>>(
      grid(256), [](VmemRef<const float, 1, 8> x, VmemRef<float, 1, 8> z) { z.store(x.load()); }, block<1, 8>(generic),
      block<1, 8>(generic));
  EXPECT_FALSE(kernel(short_kernel).compile(Mesh{{"x", 1}}).pipeline_report().rolled);
  // A partial last block (300 rows in blocks of 8) keeps the grid unrolled.
  const auto partial = pipeline_kernel<HbmRef<const float, 2, 300 * 8 - 4>, HbmRef<float, 2, 300 * 8 - 4>>(
      grid(300), [](VmemRef<const float, 2, 8> x, VmemRef<float, 2, 8> z) { z.store(x.load()); },
      block<2, 8>([](auto i) {
        return std::tuple{0, i};
      }),
      block<2, 8>([](auto i) {
        return std::tuple{0, i};
      }));
  EXPECT_FALSE(kernel(partial).compile(Mesh{{"x", 1}}).pipeline_report().rolled);
}

// Bad input: a partial block in a grid asked to roll, and program_id in a
// rolled body, are trace-time errors naming the user's line.
TEST(RolledGrid, ErrorsNameTheLine) {
  const auto partial = pipeline_kernel<HbmRef<const float, 20>, HbmRef<float, 20>>(
      grid(3).rolled(), [](VmemRef<const float, 8> x, VmemRef<float, 8> z) { z.store(x.load()); },
      block<8>([](auto i) { return i; }), block<8>([](auto i) { return i; }));
  try {
    (void)kernel(partial).compile(Mesh{{"x", 1}});
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("in a rolled grid: the block does not divide dimension 0"), std::string::npos)
        << e.what();
  }
  const auto reads_program_id = pipeline_kernel<HbmRef<const float, 16>, HbmRef<float, 16>>(
      grid(2).rolled(),
      [](VmemRef<const float, 8> x, VmemRef<float, 8> z) {
        if (program_id(0) == 0) z.store(x.load());
      },
      block<8>([](auto i) { return i; }), block<8>([](auto i) { return i; }));
  try {
    (void)kernel(reads_program_id).compile(Mesh{{"x", 1}});
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("program_id(0) in a rolled grid"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rolled_grid_test.cpp"), std::string::npos) << e.what();
  }
}

// A rolled grid counts its steps in an int32 loop index.
TEST(RolledGrid, TooManyStepsIsATraceError) {
  const auto k = pipeline_kernel<HbmRef<const float, 100000, 100000>, HbmRef<float, 100000, 100000>>(
      grid(100000, 100000).rolled(), [](VmemRef<const float, 1, 1> x, VmemRef<float, 1, 1> z) { z.store(x.load()); },
      block<1, 1>([](auto i, auto j) {
        return std::tuple{i, j};
      }),
      block<1, 1>([](auto i, auto j) {
        return std::tuple{i, j};
      }));
  try {
    (void)kernel(k).compile(Mesh{{"x", 1}});
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("counts its steps in an int32 loop index"), std::string::npos) << e.what();
  }
}

// The verifier still checks a rolled body: a copy the body starts on its
// scratch semaphore and never waits is reported before anything runs, as in
// an unrolled grid (the loop's semaphore counts are extrapolated).
TEST(RolledGrid, VerifierChecksTheLoopBody) {
  const auto k = pipeline_kernel<HbmRef<const float, 4096, 8>, HbmRef<float, 4096, 8>>(
      grid(4096),
      [](VmemRef<const float, 1, 8> x, VmemRef<float, 1, 8> z, VmemRef<float, 1, 8> copy, DmaSemaphore sem) {
        make_async_copy(x, copy, sem).start();  // never waited
        z.store(x.load());
      },
      block<1, 8>([](auto i) {
        return std::tuple{i, 0};
      }),
      block<1, 8>([](auto i) {
        return std::tuple{i, 0};
      }),
      scratch<VmemRef<float, 1, 8>>(), scratch<DmaSemaphore>());
  try {
    (void)kernel(k).compile(Mesh{{"x", 1}});
    FAIL() << "expected a VerifyError";
  } catch (const VerifyError& e) {
    EXPECT_NE(std::string(e.what()).find("never waited"), std::string::npos) << e.what();
  }
}

// [snippet:rolled-size]
TEST(RolledGrid, GraphSizeDoesNotDependOnSteps) {
  const auto ops_for = [](auto steps) {
    constexpr I n = decltype(steps)::value;
    const auto k = pipeline_kernel<HbmRef<const float, n, 128>, HbmRef<float, n, 128>>(
        grid(n), [](VmemRef<const float, 1, 128> xb, VmemRef<float, 1, 128> zb) { zb.store(xb.load() + 1.0f); },
        block<1, 128>([](auto i) {
          return std::tuple{i, 0};
        }),
        block<1, 128>([](auto i) {
          return std::tuple{i, 0};
        }));
    const Executable exe = kernel(k).compile(Mesh{{"x", 1}});
    EXPECT_TRUE(exe.pipeline_report().rolled);
    return exe.graph().num_ops();
  };
  EXPECT_EQ(ops_for(std::integral_constant<I, 1000>{}), ops_for(std::integral_constant<I, 100000>{}));
}
// [/snippet]

}  // namespace
