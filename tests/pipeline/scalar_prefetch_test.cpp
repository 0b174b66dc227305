// Scalar operands (Pallas' PrefetchScalarGridSpec) and scratch operands of
// pipeline_kernel, and the PipelineReport an Executable keeps. Block indices
// read from scalar operands are compared at run time: the copies that ran
// are counted by the runtime (Runtime::totals), per call, for several tables
// through one Executable, against the number of block changes the table
// holds (counted on the host).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <refx/extend/graph_walk.hpp>
#include <refx/pipeline.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "../../examples/ragged_paged_attention.hpp"

namespace {
using namespace refx;
using I = std::int64_t;
using i32 = std::int32_t;

/// Steps whose entry differs from the step before (the first step counts).
int changes(const std::vector<i32>& t) {
  int n = 0;
  for (std::size_t s = 0; s < t.size(); ++s) n += s == 0 || t[s] != t[s - 1];
  return n;
}

/// Copies the runtime ran for one call of `exe` (inputs given), and the output.
template <class... A>
std::pair<std::int64_t, std::vector<float>> run_counting(Runtime& rt, const Executable& exe, const A&... inputs) {
  const std::int64_t before = rt.totals().copies;
  const std::vector<float> out = exe(inputs...)[0].template to_host<float>(0);
  return {rt.totals().copies - before, out};
}

constexpr I kRows = 4, kCols = 32, kSteps = 8;

// A gather: step i fetches x's row block table[i]; z's row i = 2 * that row.
// Table entries repeated at consecutive steps are not fetched again, whatever
// the table holds at run time; the write-backs (one per step) are static.
const auto gather =
    pipeline_kernel<SmemRef<const i32, kSteps>, HbmRef<const float, kRows, kCols>, HbmRef<float, kSteps, kCols>>(
        grid(kSteps),
        [](SmemRef<const i32, kSteps>, VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> zb) {
          zb.store(xb.load() * 2.0f);
        },
        block<1, kCols>(
            [](I i, SmemRef<const i32, kSteps> table) { return std::make_tuple(table.at(i).load(), I{0}); }),
        block<1, kCols>([](I i, SmemRef<const i32, kSteps>) {
          return std::array{i, I{0}};
        }));

float xval(std::int64_t e) { return float(e % 97) - 40.0f; }

TEST(ScalarPrefetch, UnchangedBlocksAreNotFetchedAgainAtRunTime) {
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable exe = kernel(gather).compile(Mesh{{"x", 1}}, {}, rt);
  // Every fetch of x is decided at run time except the first step's.
  EXPECT_EQ(exe.pipeline_report().steps, std::size_t(kSteps));
  EXPECT_EQ(exe.pipeline_report().copies, (std::vector<int>{kSteps, kSteps}));
  EXPECT_EQ(exe.pipeline_report().run_time_copies, (std::vector<int>{kSteps - 1, 0}));
  const Array x = Array::generate<float>(
      1, Shape{kRows, kCols}, [](int, std::int64_t e) { return xval(e); }, rt);
  for (const std::vector<i32>& table :
       {std::vector<i32>{3, 3, 1, 1, 1, 0, 3, 3}, std::vector<i32>{0, 1, 2, 3, 0, 1, 2, 3},
        std::vector<i32>{2, 2, 2, 2, 2, 2, 2, 2}, std::vector<i32>{1, 0, 0, 1, 1, 0, 0, 1}}) {
    const Array t = Array::from_shards<i32>({table}, Shape{kSteps}, rt);
    const auto [copies, z] = run_counting(rt, exe, t, x);
    EXPECT_EQ(copies, changes(table) + kSteps) << "fetches for " << ::testing::PrintToString(table);
    for (I r = 0; r < kSteps; ++r)
      for (I c = 0; c < kCols; ++c)
        ASSERT_EQ(z[static_cast<std::size_t>(r * kCols + c)],
                  2.0f * xval(table[static_cast<std::size_t>(r)] * kCols + c))
            << r << "," << c;
  }
}

// Inside a kernel, an emit_pipeline whose index map captures a Smem Ref
// follows the same run-time rule.
TEST(ScalarPrefetch, CapturedSmemRefInEmitPipeline) {
  const auto k = [](SmemRef<const i32, kSteps> table, HbmRef<const float, kRows, kCols> x,
                    HbmRef<float, kSteps, kCols> z) {
    emit_pipeline(grid(kSteps),
                  [](VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> zb) { zb.store(xb.load() - 1.0f); })(
        in(x, block<1, kCols>([table](I i) { return std::make_tuple(table.at(i).load(), I{0}); })),
        out(z, block<1, kCols>([](I i) {
              return std::array{i, I{0}};
            })));
  };
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
  const Array x = Array::generate<float>(
      1, Shape{kRows, kCols}, [](int, std::int64_t e) { return xval(e); }, rt);
  const std::vector<i32> table{0, 0, 0, 2, 2, 1, 1, 1};
  const auto [copies, z] = run_counting(rt, exe, Array::from_shards<i32>({table}, Shape{kSteps}, rt), x);
  EXPECT_EQ(copies, changes(table) + kSteps);
  for (I r = 0; r < kSteps; ++r)
    ASSERT_EQ(z[static_cast<std::size_t>(r * kCols + 5)], xval(table[static_cast<std::size_t>(r)] * kCols + 5) - 1.0f)
        << r;
}

// Output write-backs follow the same rule: a segment sum whose output block
// is seg[i] (sorted segment ids) is written back once per segment. The body
// reads the scalar operand to start each segment's sum.
TEST(ScalarPrefetch, OutputWrittenBackOncePerRunOfEqualIndices) {
  constexpr I kSegs = 4;
  const auto segment_sum =
      pipeline_kernel<SmemRef<const i32, kSteps>, HbmRef<const float, kSteps, kCols>, HbmRef<float, kSegs, kCols>>(
          grid(kSteps),
          [](SmemRef<const i32, kSteps> seg, VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> sb) {
            const I i = program_id(0);
            if (i == 0) {
              sb.store(xb.load());
            } else {
              const auto first = seg.at(i).load() != seg.at(i - 1).load();
              when(first, [&] { sb.store(xb.load()); });
              when(!first, [&] { sb += xb.load(); });
            }
          },
          block<1, kCols>([](I i, SmemRef<const i32, kSteps>) {
            return std::array{i, I{0}};
          }),
          block<1, kCols>([](I i, SmemRef<const i32, kSteps> seg) { return std::make_tuple(seg.at(i).load(), I{0}); }));
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable exe = kernel(segment_sum).compile(Mesh{{"x", 1}}, {}, rt);
  EXPECT_EQ(exe.pipeline_report().run_time_copies, (std::vector<int>{0, kSteps - 1}));
  const Array x = Array::generate<float>(
      1, Shape{kSteps, kCols}, [](int, std::int64_t e) { return xval(e); }, rt);
  for (const std::vector<i32>& seg :
       {std::vector<i32>{0, 0, 1, 1, 1, 2, 3, 3}, std::vector<i32>{0, 1, 2, 3, 3, 3, 3, 3},
        std::vector<i32>{1, 1, 1, 1, 1, 1, 1, 1}}) {
    const Array t = Array::from_shards<i32>({seg}, Shape{kSteps}, rt);
    const std::int64_t before = rt.totals().copies;
    const Array sums = exe(t, x)[0];
    const std::vector<float> got = sums.to_host<float>(0);
    EXPECT_EQ(rt.totals().copies - before, kSteps + changes(seg)) << ::testing::PrintToString(seg);
    std::vector<bool> written(kSegs, false);
    for (I i = 0; i < kSteps; ++i) written[static_cast<std::size_t>(seg[static_cast<std::size_t>(i)])] = true;
    for (I s = 0; s < kSegs; ++s) {
      if (!written[static_cast<std::size_t>(s)]) continue;  // never written: whatever the output held
      for (I c = 0; c < kCols; ++c) {
        float want = 0;
        for (I i = 0; i < kSteps; ++i)
          if (seg[static_cast<std::size_t>(i)] == s) want += xval(i * kCols + c);
        ASSERT_EQ(got[static_cast<std::size_t>(s * kCols + c)], want) << s << "," << c;
      }
    }
  }
}

// Ring depths 1 to 3 with run-time indices, in both checked modes: the race
// detector follows every copy that ran, and lazy copies (a copy runs only
// when waited) still give the right rows.
TEST(ScalarPrefetch, RingDepthsInCheckedModes) {
  const std::vector<i32> table{2, 2, 0, 3, 3, 3, 1, 2};
  for (const RuntimeOptions& o : {RuntimeOptions{.detect_races = true}, RuntimeOptions{.lazy_copies = true}})
    for (int depth : {1, 2, 3}) {
      Runtime rt(o);
      const auto k =
          pipeline_kernel<SmemRef<const i32, kSteps>, HbmRef<const float, kRows, kCols>, HbmRef<float, kSteps, kCols>>(
              grid(kSteps),
              [](SmemRef<const i32, kSteps>, VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> zb) {
                zb.store(xb.load() + 1.0f);
              },
              block<1, kCols>([](I i, SmemRef<const i32, kSteps> t) {
                return std::make_tuple(t.at(i).load(), I{0});
              }).buffered(depth),
              block<1, kCols>([](I i, SmemRef<const i32, kSteps>) {
                return std::array{i, I{0}};
              }));
      const Executable exe = kernel(k).compile(Mesh{{"x", 2}}, {}, rt);
      const Array x = Array::generate<float>(
          2, Shape{kRows, kCols}, [](int d, std::int64_t e) { return xval(e + d); }, rt);
      const Array t = Array::from_shards<i32>({table, table}, Shape{kSteps}, rt);
      const Array z = exe(t, x)[0];
      for (int d = 0; d < 2; ++d) {
        const auto v = z.to_host<float>(d);
        for (I r = 0; r < kSteps; ++r)
          for (I c = 0; c < kCols; ++c)
            ASSERT_EQ(v[static_cast<std::size_t>(r * kCols + c)],
                      xval(table[static_cast<std::size_t>(r)] * kCols + c + d) + 1.0f)
                << "depth " << depth << " lazy " << o.lazy_copies << " device " << d << " row " << r;
      }
    }
}

// pipeline_kernel with a scratch accumulator (Pallas' scratch_shapes): a
// matmul over a 3-D grid, k innermost; the report comes from the Executable.
TEST(ScratchOperands, MatmulAccumulatesInScratch) {
  constexpr I M = 32, K = 48, N = 16, bm = 16, bk = 16, bn = 8;
  const auto mm = pipeline_kernel<HbmRef<const float, M, K>, HbmRef<const float, K, N>, HbmRef<float, M, N>>(
      grid(M / bm, N / bn, K / bk),
      [](VmemRef<const float, bm, bk> ab, VmemRef<const float, bk, bn> bb, VmemRef<float, bm, bn> cb,
         VmemRef<float, bm, bn> acc) {
        if (program_id(2) == 0) acc.store(0.0f);
        acc += dot(ab.load(), bb.load());
        if (program_id(2) == num_programs(2) - 1) cb.store(acc.load());
      },
      block<bm, bk>([](I i, I, I kk) {
        return std::array{i, kk};
      }),
      block<bk, bn>([](I, I j, I kk) {
        return std::array{kk, j};
      }),
      block<bm, bn>([](I i, I j, I) {
        return std::array{i, j};
      }),
      scratch<VmemRef<float, bm, bn>>());
  const Executable exe = kernel(mm).compile(Mesh{{"x", 1}});
  ASSERT_EQ(exe.pipeline_reports().size(), 1u);
  EXPECT_EQ(exe.pipeline_report().steps, 12u);
  EXPECT_EQ(exe.pipeline_report().copies, (std::vector<int>{12, 12, 4, 0}));
  const auto av = [](int, std::int64_t i) { return float(i % 7 - 3); };
  const auto bv = [](int, std::int64_t i) { return float(i % 5 - 2); };
  const auto c =
      exe(Array::generate<float>(1, Shape{M, K}, av), Array::generate<float>(1, Shape{K, N}, bv))[0].to_host<float>(0);
  for (I i = 0; i < M; ++i)
    for (I j = 0; j < N; ++j) {
      float want = 0;
      for (I p = 0; p < K; ++p) want += av(0, i * K + p) * bv(0, p * N + j);
      ASSERT_EQ(c[static_cast<std::size_t>(i * N + j)], want) << i << "," << j;
    }
}

// The reports of an Executable: one per pipeline of its trace, none for a
// kernel without one (pipeline_report() then says so).
TEST(Reports, OnePerPipelineOfTheTrace) {
  const auto two = [](HbmRef<const float, 64> x, HbmRef<float, 64> y, HbmRef<float, 64> z) {
    const auto same = [](I i) { return i; };
    emit_pipeline(grid(4), [](VmemRef<const float, 16> a, VmemRef<float, 16> b) { b.store(a.load()); })(
        in(x, block<16>(same)), out(y, block<16>(same)));
    emit_pipeline(grid(2), [](VmemRef<const float, 32> a, VmemRef<float, 32> b) { b.store(a.load()); })(
        in(x, block<32>([](I) { return 0; })), out(z, block<32>(same)));
  };
  const Executable exe = kernel(two).compile(Mesh{{"x", 1}});
  ASSERT_EQ(exe.pipeline_reports().size(), 2u);
  EXPECT_EQ(exe.pipeline_reports()[0].copies, (std::vector<int>{4, 4}));
  EXPECT_EQ(exe.pipeline_report().copies, (std::vector<int>{1, 2}));
  const Executable none =
      kernel([](HbmRef<const float, 4> x, HbmRef<float, 4> y) { sync_copy(x, y); }).compile(Mesh{{"x", 1}});
  EXPECT_TRUE(none.pipeline_reports().empty());
  try {
    (void)none.pipeline_report();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("traced no pipeline"), std::string::npos) << e.what();
  }
}

// An index map that reads its scalar operand past the end (step 7 reads
// table[8]): a trace-time error naming the operand, the scalar operand, the
// step and the map's line; nothing is read.
TEST(ScalarPrefetch, OutOfRangeReadIsATraceError) {
  const int line = __LINE__ + 1;  // the read
  const auto past_the_end = [](I i, SmemRef<const i32, kSteps> t) { return std::make_tuple(t.at(i + 1).load(), I{0}); };
  const auto bad =
      pipeline_kernel<SmemRef<const i32, kSteps>, HbmRef<const float, kRows, kCols>, HbmRef<float, kSteps, kCols>>(
          grid(kSteps),
          [](SmemRef<const i32, kSteps>, VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> zb) {
            zb.store(xb.load());
          },
          block<1, kCols>(past_the_end), block<1, kCols>([](I i, SmemRef<const i32, kSteps>) {
            return std::array{i, I{0}};
          }));
  try {
    (void)kernel(bad).compile(Mesh{{"x", 1}});
    ADD_FAILURE() << "no error";
  } catch (const TraceError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("refx: pipeline_kernel: the index map of operand 0 (input) reads scalar operand 0 (shape [8]) out "
                       "of its range at grid step (7): "),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("index 8"), std::string::npos) << msg;
    EXPECT_NE(msg.find("scalar_prefetch_test.cpp:" + std::to_string(line)), std::string::npos) << msg;
  }
}

// A block index read through two scalar operands, rows[perm[i]]: a perm
// entry outside rows' range is a run-time error naming the operand, the
// scalar operand, the step and the map's line, before anything is read.
TEST(ScalarPrefetch, OutOfRangeDataDependentReadIsARunTimeError) {
  const int line = __LINE__ + 2;  // the read of rows
  const auto rows_of_perm = [](I i, SmemRef<const i32, kSteps> perm, SmemRef<const i32, kRows> rows) {
    return std::make_tuple(rows.at(perm.at(i).load()).load(), I{0});
  };
  const auto k = pipeline_kernel<SmemRef<const i32, kSteps>, SmemRef<const i32, kRows>,
                                 HbmRef<const float, kRows, kCols>, HbmRef<float, kSteps, kCols>>(
      grid(kSteps),
      [](SmemRef<const i32, kSteps>, SmemRef<const i32, kRows>, VmemRef<const float, 1, kCols> xb,
         VmemRef<float, 1, kCols> zb) { zb.store(xb.load()); },
      block<1, kCols>(rows_of_perm), block<1, kCols>([](I i, SmemRef<const i32, kSteps>, SmemRef<const i32, kRows>) {
        return std::array{i, I{0}};
      }));
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
  const Array x = Array::generate<float>(
      1, Shape{kRows, kCols}, [](int, std::int64_t e) { return xval(e); }, rt);
  const Array rows = Array::from_shards<i32>({{3, 2, 1, 0}}, Shape{kRows}, rt);
  // In range: z's row i = x's row 3 - perm[i].
  const std::vector<i32> perm{0, 1, 1, 3, 2, 0, 0, 1};
  const auto z = exe(Array::from_shards<i32>({perm}, Shape{kSteps}, rt), rows, x)[0].to_host<float>(0);
  for (I r = 0; r < kSteps; ++r)
    ASSERT_EQ(z[static_cast<std::size_t>(r * kCols)], xval((3 - perm[static_cast<std::size_t>(r)]) * kCols)) << r;
  try {
    (void)exe(Array::from_shards<i32>({{0, 1, 2, 3, 0, 4, 0, 0}}, Shape{kSteps}, rt), rows, x)[0].to_host<float>(0);
    ADD_FAILURE() << "no error";
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("refx: device 0: pipeline_kernel: the index map of operand 0 (input) reads scalar operand 1 "
                       "(shape [4]) out of its range at grid step (5): index 4"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("scalar_prefetch_test.cpp:" + std::to_string(line)), std::string::npos) << msg;
  }
}

// The verifier counts a predicated copy (the run-time fetch rule) as one that
// runs: one never waited, or whose destination is read before its wait, is
// still reported before anything runs.
TEST(Verifier, PredicatedCopiesAreCheckedLikeOthers) {
  const auto compile_error = [](auto k) -> std::string {
    try {
      (void)kernel(k).compile(Mesh{{"x", 2}});
    } catch (const VerifyError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string never_waited = compile_error([](HbmRef<const float, 8> x, HbmRef<float, 8> y) {
    run_scoped([&](VmemRef<float, 8> v, DmaSemaphore sem) {
      const auto c = make_async_copy(x, v, sem);
      c.start_if((axis_index("x") == 0).id(), {});
    });
    sync_copy(x, y);
  });
  EXPECT_NE(never_waited.find("never waited"), std::string::npos) << never_waited;
  const std::string read_early = compile_error([](HbmRef<const float, 8> x, HbmRef<float, 8> y) {
    run_scoped([&](VmemRef<float, 8> v, VmemRef<float, 8> w, DmaSemaphore sem) {
      const auto c = make_async_copy(x, v, sem);
      c.start_if((axis_index("x") == 0).id(), {});
      w.store(v.load());
      c.wait();
      sync_copy(w, y);
    });
  });
  EXPECT_NE(read_early.find("reads the destination of the copy"), std::string::npos) << read_early;
}

// The ragged paged attention example's kernel in both checked modes: no race
// reported, the same output and the same copies as a plain run, and the
// unused table slots (-1) never fetched.
TEST(ScalarPrefetch, RaggedPagedAttentionInCheckedModes) {
  using namespace paged;
  const std::vector<i32> lengths{20, 1, 128, 49};
  std::vector<i32> table(static_cast<std::size_t>(kBatch * kPagesPerSeq), -1);
  i32 next = 0;
  for (I b = 0; b < kBatch; ++b)
    for (I p = 0; p * kPageSize < lengths[static_cast<std::size_t>(b)]; ++p)
      table[static_cast<std::size_t>(b * kPagesPerSeq + p)] = (11 * next++ + 5) % static_cast<i32>(kPoolPages);
  const auto run = [&](RuntimeOptions o) {
    Runtime rt(o);
    const Executable exe = kernel(attention).compile(Mesh{{"x", 1}}, {}, rt);
    const auto gen = [](int operand) { return [operand](int, I e) { return paged::input_value(operand, e); }; };
    const auto [copies, out] =
        run_counting(rt, exe, Array::from_shards<i32>({table}, Shape{kBatch, kPagesPerSeq}, rt),
                     Array::from_shards<i32>({lengths}, Shape{kBatch}, rt),
                     Array::generate<float>(1, Shape{kBatch * kQ, kHead}, gen(0), rt),
                     Array::generate<float>(1, Shape{kPoolPages * kPageSize, kHead}, gen(1), rt),
                     Array::generate<float>(1, Shape{kPoolPages * kPageSize, kHead}, gen(2), rt));
    return std::pair(copies, out);
  };
  const auto plain = run(RuntimeOptions{.workers = 2});
  I pages = 0;
  for (const i32 len : lengths) pages += (len + kPageSize - 1) / kPageSize;
  EXPECT_EQ(plain.first, 2 * kBatch + 2 * pages);
  for (const RuntimeOptions& o : {RuntimeOptions{.detect_races = true}, RuntimeOptions{.lazy_copies = true}}) {
    const auto checked = run(o);
    EXPECT_EQ(checked.first, plain.first) << "lazy " << o.lazy_copies;
    EXPECT_EQ(checked.second, plain.second) << "lazy " << o.lazy_copies;
  }
}

}  // namespace
