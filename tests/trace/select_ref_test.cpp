// pl.select_ref (docs/pallas-to-refx.md): a copy's source, destination or
// semaphore chosen at run time among several. Checked as Pallas' own tests
// do (tpu_pallas_test test_select_ref, test_select_ref_smem_index): a loop
// that copies input i into slice i of the output through a chosen semaphore,
// an index read from Smem choosing between a view and a whole Ref; also a
// chosen destination, views of a choice, a constant index, the race
// detector and explore, and an index out of range (run time and trace time).

#include <gtest/gtest.h>

#include <refx/explore.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kRows = 8, kCols = 128;
using Part = HbmRef<const std::int32_t, kRows, kCols>;
using Whole = HbmRef<std::int32_t, 4 * kRows, kCols>;
int g_line = 0;

std::int32_t at(int d, std::int64_t i) { return static_cast<std::int32_t>(d * 100000 + i); }

/// test_select_ref: input i into rows [8i, 8i + 8), each copy completing on
/// semaphore i % 2 of two.
const auto gather = [](Part x0, Part x1, Part x2, Part x3, Whole y) {
  run_scoped([&](DmaSemaphores<2> sems) {
    fori_loop(0, 4, [&](Scalar<std::int32_t> i) {
      async_copy(select_ref(i, x0, x1, x2, x3), y.at(ds(i * kRows, kRows), all),
                 select_ref(i % 2, sems.at(0), sems.at(1)))
          .wait();
    });
  });
};

std::vector<Array> parts(int devices, Runtime& rt = Runtime::global()) {
  std::vector<Array> xs;
  for (int k = 0; k < 4; ++k)
    xs.push_back(Array::generate<std::int32_t>(
        devices, Shape{kRows, kCols}, [k](int d, std::int64_t i) { return at(d, k * kRows * kCols + i); }, rt));
  return xs;
}

TEST(SelectRef, ChoosesTheSourceAndTheSemaphoreWhereTheCopyRuns) {
  Watchdog dog(kTestLimit, "select_ref gather");
  for (RuntimeOptions o : {RuntimeOptions{.workers = 2}, RuntimeOptions{.workers = 2, .detect_races = true},
                           RuntimeOptions{.workers = 2, .lazy_copies = true}}) {
    Runtime rt(o);
    const Executable exe = kernel(gather).compile(Mesh{{"x", 2}}, {}, rt);
    const std::vector<Array> xs = parts(2, rt);
    const Array y = exe(xs[0], xs[1], xs[2], xs[3])[0];
    for (int d = 0; d < 2; ++d) {
      const std::vector<std::int32_t> h = y.to_host<std::int32_t>(d);
      for (std::int64_t i = 0; i < 4 * kRows * kCols; i += 97) EXPECT_EQ(h[i], at(d, i)) << i;
    }
  }
}

TEST(SelectRef, AnIndexReadFromSmemPicksAViewOrAWholeRef) {
  // test_select_ref_smem_index: select_ref(idx[...], x0.at[0:8], x1).
  auto exe = kernel([](SmemRef<const std::int32_t, 1> idx, HbmRef<const float, 2 * kRows, kCols> x0,
                       HbmRef<const float, kRows, kCols> x1, HbmRef<float, kRows, kCols> y) {
               run_scoped([&](DmaSemaphore sem) {
                 async_copy(select_ref(idx[0], x0.at(ds<kRows>(0), all), x1), y, sem).wait();
               });
             }).compile(Mesh{{"x", 1}});
  const Array x0 = Array::generate<float>(1, Shape{2 * kRows, kCols}, tag);
  const Array x1 = Array::generate<float>(1, Shape{kRows, kCols}, [](int, std::int64_t) { return -1.0f; });
  for (std::int32_t pick : {0, 1}) {
    const Array idx = Array::generate<std::int32_t>(1, Shape{1}, [pick](int, std::int64_t) { return pick; });
    const std::vector<float> h = exe(idx, x0, x1)[0].to_host<float>(0);
    for (std::int64_t i = 0; i < kRows * kCols; i += 61) EXPECT_EQ(h[i], pick == 0 ? tag(0, i) : -1.0f) << i;
  }
}

TEST(SelectRef, ChoosesTheDestinationAndViewsEachAlternative) {
  // Device d writes its row into output (d % 2), at column block 1 of it.
  auto exe = kernel([](HbmRef<const float, kCols> x, VmemRef<float, 2, 2 * kCols> a, VmemRef<float, 2, 2 * kCols> b) {
               run_scoped([&](DmaSemaphore sem) {
                 const auto pick = axis_index("x") % 2;
                 a.at(0, all).store(full<float, 2 * kCols>(0.0f));
                 b.at(0, all).store(full<float, 2 * kCols>(0.0f));
                 async_copy(x, select_ref(pick, a, b).at(0, ds<kCols>(kCols)), sem).wait();
               });
             }).compile(Mesh{{"x", 2}});
  const Array x = Array::generate<float>(2, Shape{kCols}, tag);
  const std::vector<Array> out = exe(x);
  for (int d = 0; d < 2; ++d) {
    const std::vector<float> mine = out[static_cast<std::size_t>(d)].to_host<float>(d);
    const std::vector<float> other = out[static_cast<std::size_t>(1 - d)].to_host<float>(d);
    EXPECT_EQ(mine[0], 0.0f);
    EXPECT_EQ(mine[kCols + 3], tag(d, 3)) << d;
    EXPECT_EQ(other[kCols + 3], 0.0f) << d;
  }
}

TEST(SelectRef, AConstantIndexPicksAtTraceTime) {
  auto exe = kernel([](Part x0, Part x1, HbmRef<std::int32_t, kRows, kCols> y) {
               run_scoped([&](DmaSemaphore sem) { async_copy(select_ref(1, x0, x1), y, sem).wait(); });
             }).compile(Mesh{{"x", 1}});
  const std::string text = to_text(exe.program().graph);
  EXPECT_EQ(text.find("cond"), std::string::npos) << text;  // no branch is traced
  const std::vector<Array> xs = parts(1);
  EXPECT_EQ(exe(xs[0], xs[1])[0].to_host<std::int32_t>(0)[7], at(0, kRows * kCols + 7));
  const std::string msg = error_of([] {
    (void)kernel([](Part x0, Part x1, HbmRef<std::int32_t, kRows, kCols> y) {
      run_scoped([&](DmaSemaphore sem) {
        g_line = __LINE__; async_copy(select_ref(2, x0, x1), y, sem).wait();
      });
    }).compile(Mesh{{"x", 1}});
  });
  EXPECT_NE(msg.find("refx: select_ref: index 2 is out of range for 2 Refs"), std::string::npos) << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

TEST(SelectRef, AnIndexOutOfRangeStopsTheRunOnItsLine) {
  Watchdog dog(kTestLimit, "select_ref out of range");
  auto exe = kernel([](SmemRef<const std::int32_t, 1> idx, Part x0, Part x1, HbmRef<std::int32_t, kRows, kCols> y) {
               run_scoped([&](DmaSemaphore sem) {
                 g_line = __LINE__; const auto x = select_ref(idx[0], x0, x1);
                 async_copy(x, y, sem).wait();
               });
             }).compile(Mesh{{"x", 1}});
  const std::vector<Array> xs = parts(1);
  for (std::int32_t bad : {2, -1}) {
    const Array idx = Array::generate<std::int32_t>(1, Shape{1}, [bad](int, std::int64_t) { return bad; });
    const Array y = exe(idx, xs[0], xs[1])[0];
    const std::string msg = runtime_error_of([&] { y.block_until_ready(); });
    EXPECT_NE(msg.find(fmt::format("select_ref among 2 Refs: index {}", bad)), std::string::npos) << msg;
    EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
  }
}

TEST(SelectRef, EveryScheduleOfTheGatherIsClean) {
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable exe = kernel(gather).compile(Mesh{{"x", 2}}, {}, rt);
  std::vector<Array> args = parts(2, rt);
  args.push_back(Array::generate<std::int32_t>(2, Shape{4 * kRows, kCols}, [](int, std::int64_t) { return 0; }, rt));
  const ExploreReport r = explore(exe, args, ExploreOptions{.strategy = ExploreStrategy::exhaustive, .progress = false});
  EXPECT_TRUE(r.ok() && r.finished) << r;
}

}  // namespace
