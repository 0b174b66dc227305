// Issue 64: the messages a port of a Pallas kernel meets in a pipeline, as a
// user writing one would: index maps reading Vmem (they run on the scalar
// core, which reads Smem only), an automatic grid's clamping index map,
// predict on a kernel of two cores per device, and the target checks' hints
// for a scalar operand too large for Smem and a rank-1 block. Each trace-time
// message names the user's line. (The compile-time ones are
// compile_fail/pipeline_index_map_scalars_first.cpp,
// pipeline_body_scalars_last.cpp, pipeline_automatic_grid_traced_only_map.cpp
// and ok_pipeline_automatic_grid_min.cpp.)

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <refx/pipeline.hpp>
#include <refx/predict.hpp>
#include <refx/refx.hpp>

#include "support/testing.hpp"

namespace {
using namespace refx;
using refx::testing::at_line;
using refx::testing::has_all;
using refx::testing::thrown;
using I = std::int64_t;
using i32 = std::int32_t;

constexpr I kRows = 4, kCols = 128, kSteps = 8;

const auto row_i = [](auto i) { return std::make_tuple(i, I{0}); };

// A gather whose row table was staged in Vmem and captured by the index map
// (Pallas would reject the map: its refs are Smem scalar-prefetch operands).
// The map's load is refused while tracing, naming the operand, the Vmem Ref,
// the grid step and the load's line.
TEST(IndexMapMemory, VmemTableReadByAnUnrolledGridsMapIsRefused) {
  int line = 0;
  const auto k = [&](VmemRef<const i32, kSteps> rows, HbmRef<const float, kRows, kCols> x,
                     HbmRef<float, kSteps, kCols> z) {
    const auto from_table = [&](I i) {
      line = __LINE__ + 1;
      return std::make_tuple(rows.at(i).load(), I{0});
    };
    emit_pipeline(grid(kSteps), [](VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> zb) {
      zb.store(xb.load());
    })(in(x, block<1, kCols>(from_table)), out(z, block<1, kCols>(row_i)));
  };
  const auto t = thrown<TraceError>([&] { (void)kernel(k).compile(Mesh{{"x", 1}}); });
  EXPECT_TRUE(has_all(t, [&] {
    return std::vector<std::string>{
        "refx: emit_pipeline: the index map of operand 0 (input) reads a Vmem Ref (i32[8]) at grid step (0); an index "
        "map runs on the scalar core, which reads Smem only (at ",
        at_line("diagnostics_test.cpp", line),
        "); pass the table as a pipeline_kernel scalar operand (SmemRef<const std::int32_t, N>, Pallas' scalar "
        "prefetch), or copy it into a Smem Ref the map reads"};
  }));
}

// The same map over an automatic grid of more than 256 steps, which rolls:
// the map is called with traced grid indices inside the loop, and its Vmem
// read is refused the same way (the step is traced, so none is named).
TEST(IndexMapMemory, VmemTableReadByARolledGridsMapIsRefused) {
  constexpr I steps = 512;
  int line = 0;
  const auto k = [&](VmemRef<const i32, steps> rows, HbmRef<const float, kRows, kCols> x,
                     HbmRef<float, steps, kCols> z) {
    const auto from_table = [&](auto i) {
      line = __LINE__ + 1;
      return std::make_tuple(rows.at(i).load(), I{0});
    };
    emit_pipeline(grid(steps), [](VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> zb) {
      zb.store(xb.load());
    })(in(x, block<1, kCols>(from_table)), out(z, block<1, kCols>(row_i)));
  };
  const auto t = thrown<TraceError>([&] { (void)kernel(k).compile(Mesh{{"x", 1}}); });
  EXPECT_TRUE(has_all(t, [&] {
    return std::vector<std::string>{
        "refx: emit_pipeline: the index map of operand 0 (input) reads a Vmem Ref (i32[512]) at a step of a rolled "
        "grid; an index map runs on the scalar core, which reads Smem only (at ",
        at_line("diagnostics_test.cpp", line), "pass the table as a pipeline_kernel scalar operand"};
  }));
}

// The legitimate form: the table in Smem, captured by the map, is accepted.
TEST(IndexMapMemory, SmemTableReadByTheMapIsAccepted) {
  const auto k = [](SmemRef<const i32, kSteps> rows, HbmRef<const float, kRows, kCols> x,
                    HbmRef<float, kSteps, kCols> z) {
    emit_pipeline(grid(kSteps),
                  [](VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> zb) { zb.store(xb.load()); })(
        in(x, block<1, kCols>([rows](I i) { return std::make_tuple(rows.at(i).load(), I{0}); })),
        out(z, block<1, kCols>(row_i)));
  };
  EXPECT_NO_THROW((void)kernel(k).compile(Mesh{{"x", 1}}));
}

// A causal-style clamp, refx::min / refx::max in a generic index map, over an
// automatic grid of 512 steps: the grid rolls (traced indices) and the map
// also compiles for the unrolled form (integer indices, integer min / max).
// Row block r of z is x's row block min(max(r - 2, 0), 3) plus 1.
TEST(AutomaticGrid, ClampingIndexMapRollsAndComputes) {
  constexpr I steps = 512;
  const auto k = [](HbmRef<const float, kRows * 8, kCols> x, HbmRef<float, steps * 8, kCols> z) {
    const auto clamp = [](auto i) { return std::make_tuple(refx::min(refx::max(i - 2, 0), kRows - 1), I{0}); };
    emit_pipeline(grid(steps), [](VmemRef<const float, 8, kCols> xb, VmemRef<float, 8, kCols> zb) {
      zb.store(xb.load() + 1.0f);
    })(in(x, block<8, kCols>(clamp)), out(z, block<8, kCols>(row_i)));
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}});
  EXPECT_TRUE(exe.pipeline_report().rolled);
  const auto value = [](int, std::int64_t e) { return static_cast<float>(e % 1000); };
  const std::vector<float> z = exe(Array::generate<float>(1, Shape{kRows * 8, kCols}, value))[0].to_host<float>(0);
  ASSERT_EQ(z.size(), static_cast<std::size_t>(steps * 8 * kCols));
  for (I r = 0; r < steps * 8; r += 7) {
    const I src = std::min<I>(std::max<I>(r / 8 - 2, 0), kRows - 1) * 8 + r % 8;
    for (I c = 0; c < kCols; c += 31)
      ASSERT_EQ(z[static_cast<std::size_t>(r * kCols + c)], value(0, src * kCols + c) + 1.0f) << r << "," << c;
  }
  // The integer forms the unrolled trace uses.
  static_assert(refx::min(I{5}, 3) == 3 && refx::max(I{-1}, 0) == 0);
  static_assert(std::is_same_v<decltype(refx::min(I{5}, 3)), I>);
}

// predict models devices of one core: asked for a kernel compiled with two
// cores per device, it says so, naming the target and the predict call's line.
TEST(Predict, SeveralCoresPerDeviceNamesTheTargetAndTheLine) {
  const Executable exe = kernel([](HbmRef<float, 8> y) { (void)y; }).compile(Mesh{{"x", 1}}.with_cores(2));
  int line = __LINE__ + 1;
  auto t = thrown<Error>([&] { (void)predict(exe, targets::v5p()); });
  EXPECT_TRUE(has_all(t, {"refx: predict: kernel 'kernel' runs on 2 cores per device, and the model of v5p steps "
                          "devices of one core each (at ",
                          at_line("diagnostics_test.cpp", line) +
                              "); predict the kernel compiled for the same mesh with one core per device (without "
                              ".with_cores(2))"}));
  line = __LINE__ + 1;
  t = thrown<Error>([&] { (void)predict(exe, targets::v5e(), std::vector<Array>{}); });
  EXPECT_TRUE(has_all(t, {"the model of v5e", at_line("diagnostics_test.cpp", line)}));
  line = __LINE__ + 1;
  t = thrown<Error>([&] { (void)predict(exe, targets::v5e(), TorusLayout{}, std::vector<Array>{}); });
  EXPECT_TRUE(has_all(t, {"the model of v5e", at_line("diagnostics_test.cpp", line)}));
}

/// The message of the TraceError compiling `k` for `t` throws ("" if none).
template <class K>
std::string target_error(const K& k, const Target& t) {
  try {
    (void)kernel(k).target(t).compile(Mesh{{"x", 1}});
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

// A page table of 300000 entries (1.1 MiB) as a scalar operand overflows
// v5e's 1 MiB of Smem: the hint is about the table, not about blocks.
TEST(TargetHints, ScalarOperandTooLargeForSmem) {
  constexpr I entries = 300000;
  using Table = SmemRef<const i32, entries>;
  const auto k = pipeline_kernel<Table, HbmRef<const float, kRows * 8, kCols>, HbmRef<float, kSteps * 8, kCols>>(
      grid(kSteps), [](Table, VmemRef<const float, 8, kCols> xb, VmemRef<float, 8, kCols> zb) { zb.store(xb.load()); },
      block<8, kCols>([](I i, Table t) { return std::make_tuple(t.at(i).load(), I{0}); }),
      block<8, kCols>([](I i, Table) { return std::make_tuple(i, I{0}); }));
  const std::string m = target_error(k, targets::v5e());
  EXPECT_NE(m.find("refx: the buffers live at once in smem need 1200000 bytes (1.1 MiB)"), std::string::npos) << m;
  EXPECT_NE(m.find("; the largest live then: i32[300000] (1.1 MiB, at "), std::string::npos) << m;
  EXPECT_NE(m.find("; a Smem operand (a scalar operand, such as a page table) is held whole: pass a smaller one "
                   "(split the table over several kernel calls), or keep it in Hbm and copy the entries a step needs "
                   "into a Smem scratch"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("blocks"), std::string::npos) << m;
}

// Smem scratch alone: the hint names scratch, not blocks or operands.
TEST(TargetHints, SmemScratchTooLarge) {
  const auto k = [](HbmRef<float, 8> y) {
    (void)y;
    run_scoped([](SmemRef<i32, 300000> s) { s.at(0).store(i32{0}); });
  };
  const std::string m = target_error(k, targets::v5e());
  EXPECT_NE(m.find("; use smaller Smem scratch buffers or end scratch scopes earlier"), std::string::npos) << m;
}

// A rank-1 block of 96 floats over 4032: the hint states the rule, a
// multiple of 1024 elements (not 1024 elements).
TEST(TargetHints, RankOneBlockHintSaysAMultiple) {
  const auto k = [](HbmRef<const float, 4032> x, HbmRef<float, 4032> z) {
    const auto one = [](I i) { return i; };
    emit_pipeline(grid(42), [](VmemRef<const float, 96> xb, VmemRef<float, 96> zb) { zb.store(xb.load()); })(
        in(x, block<96>(one)), out(z, block<96>(one)));
  };
  const std::string m = target_error(k, targets::v5p());
  EXPECT_NE(m.find("; make the block the whole array, a multiple of 1024 elements, or a power of 2 of at least 128"),
            std::string::npos)
      << m;
}

// A page index read from the page table that lies past the pool (Pallas'
// paged attention with a stale table): the run-time error names the
// pipeline_kernel, the operand, its shape and block, the step and the line of
// the operand's BlockSpec, unrolled and rolled.
template <class Grid>
std::string page_past_the_pool(Grid g, int& line) {
  using Pages = SmemRef<const i32, 4>;
  line = __LINE__ + 3;
  const auto k = pipeline_kernel<Pages, HbmRef<const float, 32>, HbmRef<float, 32>>(
      g, [](Pages, VmemRef<const float, 8> x, VmemRef<float, 8> z) { z.store(x.load()); },
      block<8>([](auto i, Pages pages) { return pages.at(i).load(); }), block<8>([](auto i, Pages) { return i; }));
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}});
  const Array pages = Array::from_shards<i32>({{0, 1, 9, 3}}, Shape{4});
  const Array x = Array::generate<float>(1, Shape{32}, [](int, std::int64_t e) { return static_cast<float>(e); });
  try {
    (void)exe(pages, x)[0].to_host<float>(0);
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "";
}

TEST(RunTimeBlockIndex, PagePastThePoolNamesTheOperandAndTheStep) {
  int line = 0;
  const std::string m = page_past_the_pool(grid(4).unrolled(), line);
  EXPECT_NE(m.find("refx: device 0: pipeline_kernel: operand 0 (input, shape [32], block [8]): the block index at "
                   "step 2 of the grid puts the block outside the array: index 72 (covering 72..79) is out of bounds "
                   "for dimension 0 of size 32"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(at_line("diagnostics_test.cpp", line)), std::string::npos) << m;
  const std::string r = page_past_the_pool(grid(4).rolled(), line);
  EXPECT_NE(r.find("pipeline_kernel: operand 0 (input, shape [32], block [8]): the block index at a step of the "
                   "rolled grid puts the block outside the array: index 72"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find(at_line("diagnostics_test.cpp", line)), std::string::npos) << r;
}

}  // namespace
