// Checked mode (RuntimeOptions::detect_races, ::lazy_copies): the
// happens-before race detector reports planted races -- two unordered copies
// into one region, a compute read before the copy's wait, a remote write into
// a buffer the owner is writing, unordered combining copies -- and is silent
// when a semaphore orders the accesses; lazy copies make a read-before-wait
// visible and keep deadlock detection exact.

#include <gtest/gtest.h>

#include <cmath>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kBlock = 32;
using In = HbmRef<const float, kBlock>;
using Out = HbmRef<float, kBlock>;

int g_line = 0;

const RuntimeOptions kDetect{.workers = 2, .detect_races = true};
const RuntimeOptions kLazy{.workers = 2, .lazy_copies = true};
const RuntimeOptions kBoth{.workers = 2, .detect_races = true, .lazy_copies = true};

Array tagged(int n, Runtime& rt) { return Array::generate<float>(n, Shape{kBlock}, tag, rt); }

class CheckedMode : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Devices, CheckedMode, device_counts(), DeviceCountName{});

// Every device copies twice into the same region of device 0's y, unordered.
TEST_P(CheckedMode, TwoUnorderedCopiesIntoOneRegionAreARace) {
  if (kThreadSanitizer) GTEST_SKIP() << "plants a real data race (the detector's job), which ThreadSanitizer aborts on";
  Watchdog dog(kTestLimit, "planted copy/copy race");
  const int n = GetParam();
  Runtime rt(kDetect);
  auto exe = kernel([n](In x, Out y) {
               run_scoped([&](RegularSemaphore arrived, DmaSemaphore send, DmaSemaphore recv) {
                 auto c = make_async_remote_copy(x, y, send, recv, 0);
                 g_line = __LINE__; c.start();
                 c.start();
                 c.wait_send();
                 c.wait_send();
                 semaphore_signal(arrived, 1, 0);
                 when(axis_index("x") == 0, [&] {
                   semaphore_wait(arrived, n);
                   for (int k = 0; k < 2 * n; ++k) c.wait_recv();
                 });
               });
             })
                 .name("racy")
                 .passes(unverified())
                 .compile(Mesh{{"x", n}}, {}, rt);
  auto out = exe(tagged(n, rt));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("data race in kernel 'racy'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("copy write into device 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

// A compute read of the destination before the copy's wait.
TEST_P(CheckedMode, ReadBeforeWaitIsARace) {
  Watchdog dog(kTestLimit, "read before wait");
  const int n = GetParam();
  Runtime rt(kDetect);
  auto exe = kernel([](In x, VmemRef<float, kBlock> y) {
               run_scoped([&](VmemRef<float, kBlock> tmp, DmaSemaphore sem) {
                 auto c = make_async_copy(x, tmp, sem);
                 c.start();
                 g_line = __LINE__; y.store(tmp.load());  // too early
                 c.wait();
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}}, {}, rt);
  auto out = exe(tagged(n, rt));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("data race"), std::string::npos) << msg;
  EXPECT_NE(msg.find("read by device"), std::string::npos) << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

// Lazy copies run only when waited: the early read sees the poison fill, on
// every call (the later ones reuse the first call's device states, whose
// scratch would otherwise still hold that call's data).
TEST_P(CheckedMode, LazyCopiesExposeAReadBeforeWait) {
  Watchdog dog(kTestLimit, "lazy read before wait");
  const int n = GetParam();
  Runtime rt(kLazy);
  auto exe = kernel([](In x, VmemRef<float, kBlock> early, VmemRef<float, kBlock> late) {
               run_scoped([&](VmemRef<float, kBlock> tmp, DmaSemaphore sem) {
                 auto c = make_async_copy(x, tmp, sem);
                 c.start();
                 early.store(tmp.load());
                 c.wait();
                 late.store(tmp.load());
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}}, {}, rt);
  StatsDelta delta(rt);
  for (int call = 0; call < 3; ++call) {
    auto out = exe(tagged(n, rt));
    for (int d = 0; d < n; ++d) {
      const auto e = out[0].to_host<float>(d);
      EXPECT_TRUE(std::isnan(e[0])) << "call " << call << ", device " << d << " read " << e[0] << " before the copy ran";
    }
    EXPECT_TRUE(all_shards_match<float>(out[1], tag));
  }
  EXPECT_EQ(delta.get().contexts_built, n);
}

// The owner writes its buffer while its left neighbour copies into it, with
// no handshake in between.
TEST_P(CheckedMode, RemoteWriteWithoutHandshakeIsARace) {
  if (kThreadSanitizer) GTEST_SKIP() << "plants a real data race (the detector's job), which ThreadSanitizer aborts on";
  Watchdog dog(kTestLimit, "remote write race");
  const int n = GetParam();
  if (n == 1) GTEST_SKIP() << "one device: the copy into its own buffer follows its store in program order";
  Runtime rt(kDetect);
  auto exe = kernel([](In x, Out y) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               run_scoped([&](VmemRef<float, kBlock> buf, DmaSemaphore send, DmaSemaphore recv) {
                 buf.store(0.0f);
                 auto c = make_async_remote_copy(x, buf, send, recv, right);
                 c.start();
                 c.wait();
                 sync_copy(buf, y);
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}}, {}, rt);
  auto out = exe(tagged(n, rt));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("data race"), std::string::npos) << msg;
  EXPECT_NE(msg.find("write by device"), std::string::npos) << msg;
}

// With a "ready" handshake before the copy, the same kernel is race-free.
TEST_P(CheckedMode, HandshakeOrdersTheRemoteWrite) {
  Watchdog dog(kTestLimit, "ordered remote write");
  const int n = GetParam();
  for (const RuntimeOptions& o : {kDetect, kBoth}) {
    Runtime rt(o);
    auto exe = kernel([](In x, Out y) {
                 auto right = (axis_index("x") + 1) % axis_size("x");
                 auto left = (axis_index("x") + axis_size("x") - 1) % axis_size("x");
                 run_scoped([&](VmemRef<float, kBlock> buf, RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                   buf.store(0.0f);
                   semaphore_signal(ready, 1, left);
                   semaphore_wait(ready, 1);
                   auto c = make_async_remote_copy(x, buf, send, recv, right);
                   c.start();
                   c.wait();
                   sync_copy(buf, y);
                 });
               })
                   .compile(Mesh{{"x", n}}, {}, rt);
    auto out = exe(tagged(n, rt));
    EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) { return tag(mod(d - 1, n), i); }))
        << "lazy " << o.lazy_copies;
  }
}

// Copies into one region ordered by a token passed along device ids are not
// a race: device d copies after device d-1's copy completed.
TEST_P(CheckedMode, CopiesOrderedBySemaphoresAreNotARace) {
  Watchdog dog(kTestLimit, "ordered copies");
  const int n = GetParam();
  Runtime rt(kBoth);
  auto exe = kernel([n](In x, Out y) {
               auto me = axis_index("x");
               run_scoped([&](RegularSemaphore token, RegularSemaphore arrived, DmaSemaphore send, DmaSemaphore recv) {
                 auto c = make_async_remote_copy(x, y, send, recv, 0);
                 when(me > 0, [&] { semaphore_wait(token, 1); });
                 c.start();
                 c.wait_send();
                 when(me < n - 1, [&] { semaphore_signal(token, 1, me + 1); });
                 semaphore_signal(arrived, 1, 0);
                 when(me == 0, [&] {
                   semaphore_wait(arrived, n);
                   for (int k = 0; k < n; ++k) c.wait_recv();
                 });
               });
             })
                 .compile(Mesh{{"x", n}}, {}, rt);
  auto out = exe(tagged(n, rt));
  // The last device's block wins.
  const auto y0 = out[0].to_host<float>(0);
  for (std::int64_t i = 0; i < kBlock; ++i) ASSERT_EQ(y0[static_cast<std::size_t>(i)], tag(n - 1, i));
}

// Unordered combining copies into one destination are a race (a combining
// copy is a read-modify-write of the destination); order them, as the ring
// collectives do, or give each sender its own slot.
TEST_P(CheckedMode, UnorderedAccumulatesIntoOneDestinationAreARace) {
  if (kThreadSanitizer) GTEST_SKIP() << "plants a real data race (the detector's job), which ThreadSanitizer aborts on";
  Watchdog dog(kTestLimit, "accumulate race");
  const int n = GetParam();
  if (n == 1) GTEST_SKIP() << "needs two senders";
  Runtime rt(kDetect);
  auto exe = kernel([n](In x, Out y) {
               run_scoped([&](RegularSemaphore done, DmaSemaphore send, DmaSemaphore recv) {
                 auto c = make_async_remote_copy(x, y, send, recv, 0);
                 c.start(accumulate);
                 c.wait_send();
                 semaphore_signal(done, 1, 0);
                 when(axis_index("x") == 0, [&] {
                   semaphore_wait(done, n);
                   for (int k = 0; k < n; ++k) c.wait_recv();
                 });
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}}, {}, rt);
  Array y = Array::generate<float>(n, Shape{kBlock}, [](int, std::int64_t) { return 0.0f; }, rt);
  exe.call_in_place({tagged(n, rt), y});
  const std::string msg = runtime_error_of([&] { y.block_until_ready(); });
  EXPECT_NE(msg.find("data race"), std::string::npos) << msg;
}

// Deadlocks are still reported exactly when copies are lazy.
TEST_P(CheckedMode, LazyCopiesKeepDeadlockDetectionExact) {
  Watchdog dog(kTestLimit, "lazy deadlock");
  const int n = GetParam();
  Runtime rt(kBoth);
  auto exe = kernel([](HbmRef<const float, 2, kBlock> x, HbmRef<float, 2, kBlock> y) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
                 recv.name("recv");
                 auto small = make_async_remote_copy(x.at(0), y.at(0), send, recv, right);
                 small.start();
                 small.wait_send();
                 auto big = make_async_remote_copy(x, y, send, recv, right);
                 g_line = __LINE__; big.wait_recv();
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}}, {}, rt);
  auto out = exe(Array::generate<float>(n, Shape{2, kBlock}, tag, rt));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(lines_with(msg, "  device ").size(), static_cast<std::size_t>(n)) << msg;
  EXPECT_NE(msg.find(fmt::format("dma_wait on dma semaphore 'recv' has {}, wants {} (at {})", kBlock * 4, 2 * kBlock * 4,
                                 here(__FILE__, g_line))),
            std::string::npos)
      << msg;
}

// A wait absorbing several lazy copies runs all of them.
TEST_P(CheckedMode, LazyCopiesOneWaitAbsorbsSeveral) {
  Watchdog dog(kTestLimit, "lazy absorb");
  const int n = GetParam();
  Runtime rt(kBoth);
  auto exe = kernel([n](In x, HbmRef<float, 8, kBlock> slots) {
               auto me = axis_index("x");
               run_scoped([&](RegularSemaphore started, DmaSemaphore send, DmaSemaphore recv) {
                 auto c = make_async_remote_copy(x, slots.at(me), send, recv, 0);
                 c.start();
                 semaphore_signal(started, 1, 0);
                 when(me == 0, [&] {
                   semaphore_wait(started, n);
                   make_async_copy(slots.at(ds(0, n)), slots.at(ds(0, n)), recv).wait_recv();
                 });
                 c.wait_send();
               });
             })
                 .compile(Mesh{{"x", n}}, {}, rt);
  auto out = exe(tagged(n, rt));
  const auto s = out[0].to_host<float>(0);
  for (int d = 0; d < n; ++d) EXPECT_EQ(s[static_cast<std::size_t>(d * kBlock + 3)], tag(d, 3)) << "slot " << d;
}

}  // namespace
