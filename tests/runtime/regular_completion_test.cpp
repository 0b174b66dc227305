// Copies that complete on a REGULAR semaphore (TPU v6e and later; Pallas'
// tests_pallas tpu_pallas_test "test_dma_with_regular_semaphore" and
// "test_dma_wait_with_regular_semaphore_raises"): the semaphore rises by 1
// when the copy lands, whatever its size, and the kernel waits with
// semaphore_wait. Checked here on every engine that lands copies: the
// threaded runtime (plain, lazy copies, race detector, timeline), bound
// launches, predict and explore; the verifier counts copies, not bytes; a
// copy's own wait, a copy to Smem and a target before v6e are refused on the
// user's line.

#include <gtest/gtest.h>

#include <refx/explore.hpp>
#include <refx/predict.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kRows = 8, kCols = 128;
using HbmIn = HbmRef<const float, kRows, kCols>;
using HbmOut = HbmRef<float, kRows, kCols>;
using Block = VmemRef<float, kRows, kCols>;
int g_line = 0;

/// Pallas' test_dma_with_regular_semaphore: in through Vmem and out again,
/// each copy waited with semaphore_wait on one REGULAR semaphore.
auto round_trip = [](HbmIn x, HbmOut y) {
  run_scoped([&](Block buf, Block out, RegularSemaphore sem) {
    async_copy(x, buf, sem);
    semaphore_wait(sem);
    out.store(buf.load() * 2.0f);
    async_copy(out, y, sem);
    semaphore_wait(sem);
  });
};

Array rows(int devices, Runtime& rt = Runtime::global()) {
  return Array::generate<float>(devices, Shape{kRows, kCols}, tag, rt);
}

TEST(RegularCompletion, ACopyRaisesItsSemaphoreByOne) {
  Watchdog dog(kTestLimit, "round trip");
  for (RuntimeOptions o : {RuntimeOptions{.workers = 2}, RuntimeOptions{.workers = 2, .detect_races = true},
                           RuntimeOptions{.workers = 2, .lazy_copies = true}}) {
    Runtime rt(o);
    const Executable exe = kernel(round_trip).compile(Mesh{{"x", 2}}, {}, rt);
    const Array y = exe(rows(2, rt))[0];
    for (int d = 0; d < 2; ++d) {
      const std::vector<float> h = y.to_host<float>(d);
      for (std::int64_t i : {std::int64_t{0}, kCols + 3, kRows * kCols - 1}) EXPECT_EQ(h[i], 2.0f * tag(d, i)) << i;
    }
  }
}

TEST(RegularCompletion, CopiesOfAnySizeCountOneEach) {
  Watchdog dog(kTestLimit, "counted copies");
  // Four copies of 1, 2, 1 and 4 rows on one semaphore: one wait for 4.
  auto exe = kernel([](HbmIn x, HbmOut y) {
               run_scoped([&](Block buf, RegularSemaphore sem) {
                 async_copy(x.at(ds(0, 1)), buf.at(ds(0, 1)), sem);
                 async_copy(x.at(ds(1, 2)), buf.at(ds(1, 2)), sem);
                 async_copy(x.at(ds(3, 1)), buf.at(ds(3, 1)), sem);
                 async_copy(x.at(ds(4, 4)), buf.at(ds(4, 4)), sem);
                 semaphore_wait(sem, 4);
                 sync_copy(buf, y);
               });
             }).compile(Mesh{{"x", 1}});
  const std::vector<float> h = exe(rows(1))[0].to_host<float>(0);
  for (std::int64_t i = 0; i < kRows * kCols; i += 37) EXPECT_EQ(h[i], tag(0, i)) << i;
}

/// A ring shift: the receive semaphore is REGULAR (and the send one too
/// when `both`), after a handshake: "my y is free" to the left neighbour.
Executable ring(int n, bool both, Runtime& rt) {
  return kernel([n, both](VmemRef<const float, kCols> x, VmemRef<float, kCols> y) {
           auto me = axis_index("x");
           auto right = (me + 1) % n, left = (me + n - 1) % n;
           if (both) {
             run_scoped([&](RegularSemaphore ready, RegularSemaphore send, RegularSemaphore recv) {
               semaphore_signal(ready, 1, left);
               semaphore_wait(ready, 1);
               make_async_remote_copy(x, y, send, recv, right).start();
               semaphore_wait(send);
               semaphore_wait(recv);
             });
           } else {
             run_scoped([&](RegularSemaphore ready, DmaSemaphore send, RegularSemaphore recv) {
               semaphore_signal(ready, 1, left);
               semaphore_wait(ready, 1);
               auto c = make_async_remote_copy(x, y, send, recv, right);
               c.start();
               c.wait_send();
               semaphore_wait(recv);
             });
           }
         })
      .compile(Mesh{{"x", n}}, {}, rt);
}

TEST(RegularCompletion, RemoteCopiesRaiseTheReceiversSemaphoreByOne) {
  Watchdog dog(kTestLimit, "ring");
  for (int n : {1, 2, 4})
    for (bool both : {false, true}) {
      RuntimeOptions o{.workers = 4};
      Runtime rt(o);
      const Executable exe = ring(n, both, rt);
      for (int call = 0; call < 3; ++call) {  // bound after the first call
        const Array y = exe(Array::generate<float>(
            n, Shape{kCols}, [call](int d, std::int64_t i) { return tag(d, i) + static_cast<float>(call); }, rt))[0];
        for (int d = 0; d < n; ++d)
          EXPECT_EQ(y.to_host<float>(d)[5], tag(mod(d - 1, n), 5) + static_cast<float>(call)) << n << " " << both;
      }
      EXPECT_EQ(rt.totals().bound, 3) << n << " devices; both REGULAR: " << both;
    }
}

TEST(RegularCompletion, PredictAndExploreLandThemToo) {
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable exe = ring(2, false, rt);
  const Array x = Array::generate<float>(2, Shape{kCols}, tag, rt), y = Array::generate<float>(2, Shape{kCols}, tag, rt);
  const Prediction p = predict(exe, targets::v6e(), {x, y});
  EXPECT_GT(p.seconds(), 0);
  const ExploreReport r = explore(exe, {x, y}, ExploreOptions{.strategy = ExploreStrategy::exhaustive, .progress = false});
  EXPECT_TRUE(r.ok() && r.finished) << r;
}

TEST(RegularCompletion, TheTimelineFlowsFromTheCopyToTheSemaphoreWait) {
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable exe = kernel(round_trip).compile(Mesh{{"x", 1}}, {}, rt);
  rt.start_timeline();
  exe(rows(1, rt))[0].block_until_ready();
  const std::string json = rt.stop_timeline().json();
  std::size_t flows = 0;  // each copy's flow ends at the semaphore_wait that took it
  for (std::size_t at = json.find(R"("ph":"f")"); at != std::string::npos; at = json.find(R"("ph":"f")", at + 1)) ++flows;
  EXPECT_EQ(flows, 2u) << json;
}

TEST(RegularCompletion, TheVerifierCountsCopiesNotBytes) {
  // Two copies in flight, one waited: the first read may see either unlanded.
  const std::string early = error_of([] {
    (void)kernel([](HbmIn x, HbmOut y) {
      run_scoped([&](Block a, Block b, RegularSemaphore sem) {
        async_copy(x, a, sem);
        async_copy(x, b, sem);
        semaphore_wait(sem);
        g_line = __LINE__; sync_copy(a, y);
        semaphore_wait(sem);
      });
    }).compile(Mesh{{"x", 1}});
  });
  EXPECT_NE(early.find("before the copy is waited"), std::string::npos) << early;
  EXPECT_NE(early.find("wait for it with semaphore_wait on"), std::string::npos) << early;
  EXPECT_NE(early.find(here(__FILE__, g_line)), std::string::npos) << early;
  // Two copies, one wait: the scope ends with the semaphore at 1.
  const std::string unbalanced = error_of([] {
    (void)kernel([](HbmIn x, HbmOut) {
      run_scoped([&](Block a, Block b, RegularSemaphore sem) {
        async_copy(x, a, sem);
        async_copy(x, b, sem);
        semaphore_wait(sem);
      });
    }).compile(Mesh{{"x", 1}});
  });
  EXPECT_NE(unbalanced.find("the copies, signals and waits on"), std::string::npos) << unbalanced;
  EXPECT_NE(unbalanced.find("it ends at 1"), std::string::npos) << unbalanced;
  // Waiting for both before either is read is right.
  EXPECT_NO_THROW((void)kernel([](HbmIn x, HbmOut y) {
                    run_scoped([&](Block a, Block b, RegularSemaphore sem) {
                      async_copy(x, a, sem);
                      async_copy(x, b, sem);
                      semaphore_wait(sem, 2);
                      b.store(a.load() + b.load());
                      sync_copy(b, y);
                    });
                  }).compile(Mesh{{"x", 1}}));
}

TEST(RegularCompletion, TheRuntimeReportsACopyNeverWaited) {
  Watchdog dog(kTestLimit, "never waited");
  auto exe = kernel([](HbmIn x, HbmOut) {
               run_scoped([&](Block a, RegularSemaphore sem) { async_copy(x, a, sem); });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", 1}});
  const Array out = exe(rows(1))[0];
  const std::string msg = runtime_error_of([&] { out.block_until_ready(); });
  EXPECT_NE(msg.find("ends at 1"), std::string::npos) << msg;
}

TEST(RegularCompletion, ACopysOwnWaitIsRefusedOnTheUsersLine) {
  // Through the untyped descriptor (the typed one refuses at compile time:
  // tests/compile_fail/copy_wait_regular_semaphore.cpp).
  const std::string msg = error_of([] {
    (void)kernel([](HbmIn x, HbmOut) {
      run_scoped([&](Block a, RegularSemaphore sem) {
        const AsyncCopy c = make_async_copy(x, a, sem);
        c.start();
        g_line = __LINE__; c.wait();
      });
    }).compile(Mesh{{"x", 1}});
  });
  EXPECT_NE(msg.find("waits on a DMA semaphore; a copy that completes on a REGULAR semaphore is waited with "
                     "semaphore_wait"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

TEST(RegularCompletion, ACopyToOrFromSmemIsRefused) {
  const std::string msg = error_of([] {
    (void)kernel([](HbmRef<const std::int32_t, 16> x, HbmRef<std::int32_t, 16>) {
      run_scoped([&](SmemRef<std::int32_t, 16> s, RegularSemaphore sem) {
        g_line = __LINE__; async_copy(x, s, sem);
        semaphore_wait(sem);
      });
    }).compile(Mesh{{"x", 1}});
  });
  EXPECT_NE(msg.find("a copy to or from Smem completes on a DMA semaphore, not a REGULAR one"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

TEST(RegularCompletion, TargetsBeforeV6eRefuseIt) {
  const auto k = [](HbmIn x, HbmOut y) {
    run_scoped([&](Block buf, RegularSemaphore sem) {
      g_line = __LINE__; async_copy(x, buf, sem);
      semaphore_wait(sem);
      sync_copy(buf, y);
    });
  };
  for (const Target* t : targets::all()) {
    if (t->regular_semaphore_copies) {
      EXPECT_NO_THROW((void)kernel(k).target(*t).compile(Mesh{{"x", 1}})) << t->name;
      continue;
    }
    const std::string msg = error_of([&] { (void)kernel(k).target(*t).compile(Mesh{{"x", 1}}); });
    EXPECT_NE(msg.find(fmt::format("but {}'s copies complete on DMA semaphores only", t->name)), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
  }
  EXPECT_FALSE(targets::v5e().regular_semaphore_copies);
  EXPECT_TRUE(targets::v6e().regular_semaphore_copies && targets::tpu7x().regular_semaphore_copies);
}

}  // namespace
