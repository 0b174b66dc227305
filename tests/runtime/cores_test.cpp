// Cores per device (Mesh::with_cores, trace/cores.hpp): every core runs its
// own copy of the kernel as a lane of the runtime; the cores of a device
// share its Hbm and each has its own scratch; core_barrier orders them; the
// race detector, the deadlock report and the timeline name the core.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <refx/ir/detail/threefry.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

int g_line = 0;

// Each core of each device writes (device, core) into its own row of the
// device's output: both cores ran, on the device's shared Hbm.
TEST(Cores, EveryCoreRunsItsCopyOnTheSharedHbm) {
  Watchdog dog(kTestLimit, "core index");
  Runtime rt(RuntimeOptions{.workers = 2});
  std::vector<std::int32_t> traced;
  auto exe = kernel([&](HbmRef<float, 2, 8> y) {
               traced.push_back(core_index());
               EXPECT_EQ(num_cores(), 2);
               run_scoped([&](VmemRef<float, 8> row) {
                 row.store(static_cast<float>(10 + core_index()));
                 sync_copy(row, y.at(core_index()));
               });
             }).compile(Mesh{{"x", 3}}.with_cores(2), {}, rt);
  EXPECT_EQ(traced, (std::vector<std::int32_t>{0, 1}));
  const auto out = exe();
  for (int d = 0; d < 3; ++d) {
    const auto y = out[0].to_host<float>(d);
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < 8; ++i) EXPECT_EQ(y[static_cast<std::size_t>(c * 8 + i)], float(10 + c)) << d << c << i;
  }
}

// Scratch is per core: each core fills its Vmem with its own number, waits
// for the other at a barrier, and reads its Vmem back. A scratch shared by
// the cores would show one core's number in both rows.
TEST(Cores, VmemScratchIsPerCore) {
  Watchdog dog(kTestLimit, "per-core scratch");
  Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true});
  auto exe = kernel([](HbmRef<float, 2, 8> y) {
               run_scoped([&](VmemRef<float, 8> mine) {
                 core_map([&](std::int32_t core) {
                   mine.store(static_cast<float>(100 + core));
                   core_barrier();
                   sync_copy(mine, y.at(core));
                 });
               });
             }).compile(Mesh{{"x", 1}}.with_cores(2), {}, rt);
  const auto y = exe()[0].to_host<float>(0);
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 8; ++i) EXPECT_EQ(y[static_cast<std::size_t>(c * 8 + i)], float(100 + c));
}

// Core 0 writes Hbm before the barrier; core 1 reads it after: it sees the
// data, and the race detector finds the accesses ordered.
TEST(Cores, CoreBarrierOrdersWhatCoresWrite) {
  Watchdog dog(kTestLimit, "core barrier");
  Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true});
  // [snippet:core-barrier]
  // Core 0 writes `shared`; after the barrier, core 1 reads what it wrote.
  const auto publish = [](HbmRef<const float, 8> x, HbmRef<float, 8> shared, HbmRef<float, 8> seen) {
    core_map([&](std::int32_t core) {
      if (core == 0) sync_copy(x, shared);
      core_barrier();
      if (core == 1) sync_copy(shared, seen);
    });
  };
  const Executable exe = kernel(publish).compile(Mesh{{"x", 2}}.with_cores(2), {}, rt);
  // [/snippet]
  for (int call = 0; call < 3; ++call) {
    const auto out = exe(Array::generate<float>(
        2, Shape{8}, [&](int d, std::int64_t i) { return tag(d, i) + call; }, rt));
    for (int d = 0; d < 2; ++d) {
      const auto seen = out[1].to_host<float>(d);
      for (int i = 0; i < 8; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], tag(d, i) + call);
    }
  }
}

// Without the barrier the same two accesses are a race naming both cores.
TEST(Cores, TwoCoresWritingOneHbmRegionAreARaceNamingBoth) {
  if (kThreadSanitizer) GTEST_SKIP() << "plants a real data race (the detector's job), which ThreadSanitizer aborts on";
  Watchdog dog(kTestLimit, "core race");
  Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true});
  auto exe = kernel([](HbmRef<const float, 8> x, HbmRef<float, 8> y) {
               g_line = __LINE__ + 1;
               sync_copy(x, y);
             })
                 .name("both_cores")
                 .compile(Mesh{{"x", 1}}.with_cores(2), {}, rt);
  auto out = exe(Array::generate<float>(1, Shape{8}, tag, rt));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("data race in kernel 'both_cores'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("started by device 0 core 0 at " + here(__FILE__, g_line)), std::string::npos) << msg;
  EXPECT_NE(msg.find("started by device 0 core 1 at " + here(__FILE__, g_line)), std::string::npos) << msg;
}

// A core waiting for a signal that never comes: the deadlock report names it.
TEST(Cores, DeadlockReportNamesTheCore) {
  Watchdog dog(kTestLimit, "core deadlock");
  Runtime rt(RuntimeOptions{.workers = 2});
  auto exe = kernel([](HbmRef<float, 8> y) {
               run_scoped([&](RegularSemaphore never) {
                 never.name("never");
                 if (core_index() == 1) {
                   g_line = __LINE__ + 1;
                   semaphore_wait(never, 1);
                 }
               });
               (void)y;
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", 2}}.with_cores(2), {}, rt);
  auto out = exe();
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("deadlock in kernel"), std::string::npos) << msg;
  for (int d = 0; d < 2; ++d)
    EXPECT_NE(
        msg.find(fmt::format("device {} core 1: semaphore_wait on regular semaphore 'never' has 0, wants 1 (at {})", d,
                             here(__FILE__, g_line))),
        std::string::npos)
        << msg;
  EXPECT_EQ(lines_with(msg, " core 0:").size(), 0u) << msg;
}

// A core that never reaches the barrier: the other core's wait is reported.
TEST(Cores, UnmatchedCoreBarrierIsADeadlockNamingTheWaitingCore) {
  Watchdog dog(kTestLimit, "unmatched barrier");
  Runtime rt(RuntimeOptions{.workers = 2});
  auto exe = kernel([](HbmRef<float, 8> y) {
               core_map([&](std::int32_t core) {
                 if (core == 0) core_barrier();
               });
               (void)y;
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", 1}}.with_cores(2), {}, rt);
  auto out = exe();
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("device 0 core 0: semaphore_wait"), std::string::npos) << msg;
}

TEST(Cores, CoreBarrierOutsideCoreMapIsATraceError) {
  const std::string msg = error_of([] {
    (void)kernel([](HbmRef<float, 8> y) {
      (void)y;
      g_line = __LINE__ + 1;
      core_barrier();
    }).compile(Mesh{{"x", 1}}.with_cores(2));
  });
  EXPECT_NE(msg.find("refx: core_barrier() outside core_map"), std::string::npos) << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

TEST(Cores, CoreMapInsideCoreMapIsATraceError) {
  const std::string msg = error_of([] {
    (void)kernel([](HbmRef<float, 8> y) {
      (void)y;
      core_map([&](std::int32_t) {
        g_line = __LINE__ + 1;
        core_map([&](std::int32_t) {});
      });
    }).compile(Mesh{{"x", 1}}.with_cores(2));
  });
  EXPECT_NE(msg.find("refx: core_map inside core_map"), std::string::npos) << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

// On a device with one core, core_map runs its body once and core_barrier
// has nobody to wait for.
TEST(Cores, OneCoreCoreMapRunsOnce) {
  int bodies = 0;
  auto exe = kernel([&](HbmRef<const float, 8> x, HbmRef<float, 8> y) {
               core_map([&](std::int32_t core) {
                 ++bodies;
                 EXPECT_EQ(core, 0);
                 core_barrier();
                 sync_copy(x, y);
               });
             }).compile(Mesh{{"x", 2}});
  EXPECT_EQ(bodies, 1);
  const auto y = exe(Array::generate<float>(2, Shape{8}, tag))[0].to_host<float>(1);
  EXPECT_EQ(y[3], tag(1, 3));
}

TEST(Cores, MoreCoresThanTheRuntimeRunsIsAnError) {
  EXPECT_NE(error_of([] {
              (void)Mesh{{"x", 1}}.with_cores(Mesh::max_cores + 1);
            }).find("refx: Mesh::with_cores(17): a device has 1 to 16 cores"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)Mesh{{"x", 1}}.with_cores(0); }).find("refx: Mesh::with_cores(0)"), std::string::npos);
  const Mesh two = Mesh{{"x", 2}}.with_cores(2);
  EXPECT_EQ(two.lanes(), 4);
  EXPECT_FALSE(two == Mesh({{"x", 2}}));
}

// The most cores a device may have all run, each parking at the barrier,
// on one worker: a core is state, not a thread.
TEST(Cores, MaxCoresRunOnOneWorker) {
  Watchdog dog(kTestLimit, "max cores");
  Runtime rt(RuntimeOptions{.workers = 1});
  auto exe = kernel([](HbmRef<float, Mesh::max_cores, 4> y) {
               run_scoped([&](VmemRef<float, 4> v) {
                 core_map([&](std::int32_t core) {
                   v.store(static_cast<float>(core));
                   core_barrier();
                   core_barrier();
                   sync_copy(v, y.at(core));
                 });
               });
             }).compile(Mesh{{"x", 1}}.with_cores(Mesh::max_cores), {}, rt);
  const auto y = exe()[0].to_host<float>(0);
  for (int c = 0; c < Mesh::max_cores; ++c) EXPECT_EQ(y[static_cast<std::size_t>(c * 4)], float(c));
}

// Random bits are keyed by (seed, device, core, call): the cores of a device
// draw independent streams, core c's the one docs/tutorial.md ("Random bits") documents.
TEST(Cores, CoresDrawIndependentRandomStreams) {
  Watchdog dog(kTestLimit, "core random bits");
  Runtime rt(RuntimeOptions{.workers = 2});
  auto exe = kernel([](HbmRef<std::uint32_t, 2, 8> y) {
               run_scoped([&](VmemRef<std::uint32_t, 8> v) {
                 prng_seed(1234);
                 v.store(prng_random_bits<8>());
                 sync_copy(v, y.at(core_index()));
               });
             }).compile(Mesh{{"x", 2}}.with_cores(2), {}, rt);
  const Array out = exe()[0];
  for (std::uint32_t d = 0; d < 2; ++d) {
    const auto y = out.to_host<std::uint32_t>(static_cast<int>(d));
    for (std::uint32_t c = 0; c < 2; ++c) {
      detail::ThreefryWords k{0u, 1234u};
      for (std::uint32_t w : {d, c, 0u}) k = detail::threefry_fold_in(k, w);  // the first call after the seed
      for (std::uint32_t i = 0; i < 8; ++i) {
        const detail::ThreefryWords block = detail::threefry2x32(k, {0u, i});
        EXPECT_EQ(y[c * 8 + i], block[0] ^ block[1]) << d << " " << c << " " << i;
      }
    }
    EXPECT_NE(y[0], y[8]);
  }
}

// The predicted-time model steps devices, not cores: it says so.
TEST(Cores, PredictAsksForOneCorePerDevice) {
  const Executable exe = kernel([](HbmRef<float, 8> y) { (void)y; }).compile(Mesh{{"x", 1}}.with_cores(2));
  const std::string msg = error_of([&] { (void)predict(exe, targets::v5p(), std::vector<Array>{}); });
  EXPECT_NE(msg.find("refx: predict: kernel 'kernel' runs on 2 cores per device"), std::string::npos) << msg;
}

// The timeline has a lane per core.
TEST(Cores, TimelineHasALanePerCore) {
  Watchdog dog(kTestLimit, "core timeline");
  Runtime rt(RuntimeOptions{.workers = 2});
  auto exe = kernel([](HbmRef<const float, 8> x, HbmRef<float, 2, 8> y) {
               sync_copy(x, y.at(core_index()));
             }).compile(Mesh{{"x", 2}}.with_cores(2), {}, rt);
  rt.start_timeline();
  exe(Array::generate<float>(2, Shape{8}, tag, rt))[0].block_until_ready();
  const std::string json = rt.stop_timeline().json();
  for (int d = 0; d < 2; ++d)
    for (int c = 0; c < 2; ++c)
      EXPECT_NE(json.find(fmt::format("\"name\":\"device {} core {}\"", d, c)), std::string::npos) << d << c << json;
}

}  // namespace
