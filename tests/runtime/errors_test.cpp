// What the runtime reports instead of hanging or corrupting silently:
// exit-invariant violations (a semaphore not back to 0, a copy never waited),
// exact deadlock detection (one line per parked device with the op, the
// semaphore, its count, the wanted value and the user's line), a failure on
// one device releasing every other device, and the runtime staying usable
// (including barrier semaphores) after any of these.

#include <gtest/gtest.h>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kBlock = 64;
using In = HbmRef<const float, kBlock>;
using Out = HbmRef<float, kBlock>;

// Source lines of the offending operations, recorded while tracing.
int g_wait_line = 0;
int g_scope_line = 0;

Array tagged(int n) { return Array::generate<float>(n, Shape{kBlock}, tag); }

/// A right permute after a neighbour barrier on the barrier semaphore and a
/// second handshake on a REGULAR semaphore (the double barrier of b.7).
Executable good_permute(int n, Runtime& rt = Runtime::global()) {
  return kernel([](In x, Out y) {
           auto me = axis_index("x");
           auto right = (me + 1) % axis_size("x");
           auto left = (me + axis_size("x") - 1) % axis_size("x");
           auto barrier = get_barrier_semaphore();
           semaphore_signal(barrier, 1, left);
           semaphore_signal(barrier, 1, right);
           semaphore_wait(barrier, 2);
           run_scoped([&](RegularSemaphore again, DmaSemaphore send, DmaSemaphore recv) {
             semaphore_signal(again, 1, left);
             semaphore_signal(again, 1, right);
             semaphore_wait(again, 2);
             auto c = make_async_remote_copy(x, y, send, recv, right);
             c.start();
             c.wait();
           });
         })
      .name("good_permute")
      .collective_id(0)
      .compile(Mesh{{"x", n}}, {}, rt);
}

::testing::AssertionResult is_right_permute(const Array& a, int n) {
  return all_shards_match<float>(a, [&](int d, std::int64_t i) { return tag(mod(d - 1, n), i); });
}

class Errors : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Devices, Errors, device_counts(), DeviceCountName{});

// ---- exit invariants

TEST_P(Errors, RegularSemaphoreSignalledAndNeverWaited) {
  Watchdog dog(kTestLimit, "leftover signal");
  const int n = GetParam();
  auto exe = kernel([n](In x, Out y) {
               sync_copy(x, y);
               run_scoped([&](RegularSemaphore s) {
                 s.name("leftover");
                 when(axis_index("x") == n - 1, [&] { semaphore_signal(s, 3); });
               });
             })
                 .name("leaky")
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("kernel 'leaky' ended with semaphores not back to 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find(fmt::format("device {}: regular semaphore 'leftover' ends at 3", n - 1)), std::string::npos) << msg;
  EXPECT_EQ(lines_with(msg, "ends at").size(), 1u) << msg;
  // The error belongs to the call; the runtime goes on.
  EXPECT_TRUE(is_right_permute(good_permute(n)(tagged(n))[0], n));
}

TEST_P(Errors, AllocatedSemaphoreIsNamedByItsAllocationLineNotAsABarrier) {
  Watchdog dog(kTestLimit, "allocated leftover");
  const int n = GetParam();
  int line = 0;
  auto exe = kernel([&line](In x, Out y) {
               sync_copy(x, y);
               line = __LINE__; auto s = allocate<RegularSemaphore>();
               semaphore_signal(s, 2);
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(msg.find("barrier semaphore"), std::string::npos) << msg;
  EXPECT_NE(msg.find("regular semaphore allocated at " + here(__FILE__, line)), std::string::npos) << msg;
}

TEST_P(Errors, UnnamedSemaphoreIsNamedByItsAllocationLine) {
  Watchdog dog(kTestLimit, "unnamed leftover");
  const int n = GetParam();
  auto exe = kernel([](In x, Out y) {
               sync_copy(x, y);
               g_scope_line = __LINE__; run_scoped([&](RegularSemaphore s) { semaphore_signal(s, 2); });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(lines_with(msg, "ends at 2").size(), static_cast<std::size_t>(n)) << msg;
  EXPECT_NE(msg.find("regular semaphore allocated by the scope at " + here(__FILE__, g_scope_line)), std::string::npos)
      << msg;
  for (int d = 0; d < n; ++d) EXPECT_NE(msg.find(fmt::format("device {}:", d)), std::string::npos) << msg;
}

// Two unnamed semaphores of one scope (a send and a receive semaphore, say)
// are told apart: the report says which parameter of the scope each is.
TEST_P(Errors, UnnamedSemaphoresOfOneScopeAreToldApart) {
  Watchdog dog(kTestLimit, "two unnamed leftovers");
  const int n = GetParam();
  auto exe = kernel([](In x, Out y) {
               sync_copy(x, y);
               g_scope_line = __LINE__; run_scoped([&](RegularSemaphore a, RegularSemaphore b) {
                 semaphore_signal(a, 1);
                 semaphore_signal(b, 2);
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  const std::string scope = "regular semaphore allocated by the scope at " + here(__FILE__, g_scope_line);
  EXPECT_EQ(lines_with(msg, scope + " (its parameter 1 of 2) ends at 1").size(), static_cast<std::size_t>(n)) << msg;
  EXPECT_EQ(lines_with(msg, scope + " (its parameter 2 of 2) ends at 2").size(), static_cast<std::size_t>(n)) << msg;
}

// The send and the receive semaphore of one remote copy, both unnamed and
// both left with bytes: each line says which one it is, and of which copy.
int g_copy_line = 0;
TEST_P(Errors, UnnamedSendAndReceiveSemaphoresSayTheirRole) {
  Watchdog dog(kTestLimit, "send and receive never waited");
  const int n = GetParam();
  auto exe = kernel([](In x, Out y) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               g_scope_line = __LINE__; run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
                 auto c = make_async_remote_copy(x, y, send, recv, right);
                 g_copy_line = __LINE__; c.start();
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  const std::string scope = "dma semaphore allocated by the scope at " + here(__FILE__, g_scope_line);
  const std::string copy = "semaphore of the remote copy at " + here(__FILE__, g_copy_line);
  EXPECT_EQ(lines_with(msg, scope + " (its parameter 1 of 2) (send " + copy + ") ends at").size(),
            static_cast<std::size_t>(n))
      << msg;
  EXPECT_EQ(lines_with(msg, scope + " (its parameter 2 of 2) (receive " + copy + ") ends at").size(),
            static_cast<std::size_t>(n))
      << msg;
}

TEST_P(Errors, LocalCopyStartedAndNeverWaited) {
  Watchdog dog(kTestLimit, "copy never waited");
  const int n = GetParam();
  auto exe = kernel([](In x, Out y) {
               run_scoped([&](DmaSemaphore pending) {
                 pending.name("pending");
                 make_async_copy(x, y, pending).start();
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(lines_with(msg, fmt::format("'pending' ends at {} (bytes", kBlock * 4)).size(), static_cast<std::size_t>(n))
      << msg;
  EXPECT_NE(msg.find("copy started and never waited"), std::string::npos) << msg;
}

// The sender waits its send semaphore but nobody waits the receive side.
TEST_P(Errors, RemoteCopyNeverReceived) {
  Watchdog dog(kTestLimit, "copy never received");
  const int n = GetParam();
  auto exe = kernel([](In x, Out y) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
                 recv.name("recv");
                 auto c = make_async_remote_copy(x, y, send, recv, right);
                 c.start();
                 c.wait_send();
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(lines_with(msg, fmt::format("'recv' ends at {}", kBlock * 4)).size(), static_cast<std::size_t>(n)) << msg;
}

// The sender moves more bytes than the receiver waits for (pallas-semantics
// b.8): the whole block arrives, the receive wait takes only the first half,
// and the other half's bytes are left on 'recv' -- an error at exit, on every
// device, not a silent success. (verify rejects this kernel at compile time,
// "ends with 128 bytes of copies never waited"; it is unverified here so
// that the run-time report is what is checked.)
TEST_P(Errors, ReceiveWaitSmallerThanTheCopyLeavesBytesOnTheSemaphore) {
  Watchdog dog(kTestLimit, "receive wait smaller than the copy");
  const int n = GetParam();
  auto exe = kernel([](In x, Out y) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
                 recv.name("recv");
                 auto whole = make_async_remote_copy(x, y, send, recv, right);
                 whole.start();
                 whole.wait_send();
                 make_async_remote_copy(x.at(ds(0, kBlock / 2)), y.at(ds(0, kBlock / 2)), send, recv, right).wait_recv();
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(lines_with(msg, fmt::format("'recv' ends at {}", kBlock / 2 * 4)).size(), static_cast<std::size_t>(n)) << msg;
}

// A barrier semaphore left non-zero is an error, and is reset for the next call.
TEST_P(Errors, BarrierSemaphoreLeftNonZeroIsResetForTheNextCall) {
  Watchdog dog(kTestLimit, "leftover barrier");
  const int n = GetParam();
  auto bad = kernel([](In x, Out y) {
               sync_copy(x, y);
               auto b = get_barrier_semaphore();
               semaphore_signal(b, 2);
               semaphore_wait(b, 1);
             })
                 .collective_id(0)
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  auto out = bad(tagged(n));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(lines_with(msg, "barrier semaphore (collective id 0) ends at 1").size(), static_cast<std::size_t>(n)) << msg;
  for (int rep = 0; rep < 3; ++rep) EXPECT_TRUE(is_right_permute(good_permute(n)(tagged(n))[0], n));
}

// ---- deadlocks: reported exactly, quickly, with the user's line

TEST_P(Errors, DeadlockOnAWaitNobodySignals) {
  Watchdog dog(kTestLimit, "deadlock: unsignalled wait");
  const int n = GetParam();
  auto exe = kernel([](In x, Out y) {
               sync_copy(x, y);
               run_scoped([&](RegularSemaphore never) {
                 never.name("never");
                 g_wait_line = __LINE__; semaphore_wait(never, 1);
               });
             })
                 .name("stuck")
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  std::string msg;
  const double secs = shortest_of(3, time_bound(1.0), [&] {
    auto out = exe(tagged(n));
    msg = runtime_error_of([&] { out[0].block_until_ready(); });
  });
  EXPECT_LT(secs, time_bound(1.0));
  EXPECT_NE(msg.find(fmt::format("deadlock in kernel 'stuck' on mesh {{x={}}}", n)), std::string::npos) << msg;
  const auto lines = lines_with(msg, "  device ");
  EXPECT_EQ(lines.size(), static_cast<std::size_t>(n)) << msg;
  for (int d = 0; d < n; ++d)
    EXPECT_NE(msg.find(fmt::format("device {}: semaphore_wait on regular semaphore 'never' has 0, wants 1 (at {})", d,
                                   here(__FILE__, g_wait_line))),
              std::string::npos)
        << msg;
  EXPECT_TRUE(is_right_permute(good_permute(n)(tagged(n))[0], n));
}

// Only the devices that are actually stuck are listed; the others finished.
TEST_P(Errors, DeadlockListsOnlyParkedDevices) {
  Watchdog dog(kTestLimit, "deadlock: one device");
  const int n = GetParam();
  auto exe = kernel([n](In x, Out y) {
               sync_copy(x, y);
               run_scoped([&](RegularSemaphore s) {
                 s.name("s");
                 // Every device signals device n-1 once; it wants one more.
                 semaphore_signal(s, 1, n - 1);
                 when(axis_index("x") == n - 1, [&] { g_wait_line = __LINE__; semaphore_wait(s, n + 1); });
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  const auto lines = lines_with(msg, "  device ");
  ASSERT_EQ(lines.size(), 1u) << msg;
  EXPECT_NE(lines[0].find(fmt::format("device {}: semaphore_wait on regular semaphore 's' has {}, wants {} (at {})", n - 1, n, n + 1,
                                      here(__FILE__, g_wait_line))),
            std::string::npos)
      << msg;
}

// Elements of semaphore arrays are named with their index; a barrier
// semaphore by its collective id.
TEST_P(Errors, ReportsNameArrayElementsAndBarriers) {
  Watchdog dog(kTestLimit, "array and barrier names");
  const int n = GetParam();
  auto leaky = kernel([](In x, Out y) {
                 sync_copy(x, y);
                 run_scoped([&](RegularSemaphores<4> sems) {
                   sems.name("sems");
                   semaphore_signal(sems.at(2), 7);
                 });
               })
                   .passes(unverified())
                   .compile(Mesh{{"x", n}});
  auto out = leaky(tagged(n));
  std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(lines_with(msg, "'sems'[2] ends at 7").size(), static_cast<std::size_t>(n)) << msg;

  auto stuck = kernel([](In x, Out y) {
                 sync_copy(x, y);
                 run_scoped([&](RegularSemaphores<4> sems) {
                   sems.name("sems");
                   g_wait_line = __LINE__; semaphore_wait(sems.at(3), 2);
                 });
               })
                   .passes(unverified())
                   .compile(Mesh{{"x", n}});
  out = stuck(tagged(n));
  msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(lines_with(msg, fmt::format("semaphore_wait on regular semaphore 'sems'[3] has 0, wants 2 (at {})", here(__FILE__, g_wait_line)))
                .size(),
            static_cast<std::size_t>(n))
      << msg;

  auto barrier = kernel([](In x, Out y) {
                   sync_copy(x, y);
                   auto b = get_barrier_semaphore();
                   semaphore_signal(b, 1);
                   g_wait_line = __LINE__; semaphore_wait(b, 2);
                 })
                     .collective_id(9)
                     .passes(unverified())
                     .compile(Mesh{{"x", n}});
  out = barrier(tagged(n));
  msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(lines_with(msg, fmt::format("semaphore_wait on barrier semaphore (collective id 9) has 1, wants 2 (at {})",
                                        here(__FILE__, g_wait_line)))
                .size(),
            static_cast<std::size_t>(n))
      << msg;
  // The barrier semaphore was reset: a balanced use of id 9 works now.
  auto balanced = kernel([](In x, Out y) {
                    sync_copy(x, y);
                    auto b = get_barrier_semaphore();
                    semaphore_signal(b, 2);
                    semaphore_wait(b, 2);
                  })
                      .collective_id(9)
                      .compile(Mesh{{"x", n}});
  EXPECT_TRUE(all_shards_match<float>(balanced(tagged(n))[0], tag));
}

// The receiver's view is twice what the sender sends: half the bytes arrive.
TEST_P(Errors, DeadlockWhenTheReceiveViewIsLargerThanTheCopy) {
  Watchdog dog(kTestLimit, "deadlock: recv view too large");
  const int n = GetParam();
  auto exe = kernel([](HbmRef<const float, 2, kBlock> x, HbmRef<float, 2, kBlock> y) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
                 recv.name("recv");
                 auto small = make_async_remote_copy(x.at(0), y.at(0), send, recv, right);
                 small.start();
                 small.wait_send();
                 auto big = make_async_remote_copy(x, y, send, recv, right);
                 g_wait_line = __LINE__; big.wait_recv();
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}});
  std::string msg;
  const double secs = shortest_of(3, time_bound(1.0), [&] {
    auto out = exe(Array::generate<float>(n, Shape{2, kBlock}, tag));
    msg = runtime_error_of([&] { out[0].block_until_ready(); });
  });
  EXPECT_LT(secs, time_bound(1.0));
  const auto lines = lines_with(msg, "  device ");
  EXPECT_EQ(lines.size(), static_cast<std::size_t>(n)) << msg;
  for (int d = 0; d < n; ++d)
    EXPECT_NE(msg.find(fmt::format("device {}: dma_wait on dma semaphore 'recv' has {}, wants {} (at {})", d, kBlock * 4,
                                   2 * kBlock * 4, here(__FILE__, g_wait_line))),
              std::string::npos)
        << msg;
}

// A deadlock while a large (chunked) copy is still in flight is only declared
// once the copy has landed, and then the waiting device is reported.
TEST_P(Errors, DeadlockDeclaredOnlyAfterCopiesInFlightLanded) {
  Watchdog dog(kTestLimit, "deadlock with copy in flight");
  const int n = GetParam();
  constexpr std::int64_t big = std::int64_t{1} << (kSanitized ? 19 : 21);  // 2 or 8 MiB of floats
  Runtime rt(RuntimeOptions{.workers = 2});
  auto exe = kernel([](HbmRef<const float, big> x, HbmRef<float, big> y) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               run_scoped([&](RegularSemaphore never, DmaSemaphore send, DmaSemaphore recv) {
                 never.name("never");
                 auto c = make_async_remote_copy(x, y, send, recv, right);
                 c.start();
                 when(axis_index("x") == 0, [&] { g_wait_line = __LINE__; semaphore_wait(never, 1); });
                 c.wait();
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", n}}, {}, rt);
  const StatsDelta delta(rt);
  auto out = exe(Array::generate<float>(n, Shape{big}, [](int d, std::int64_t i) { return static_cast<float>(d + i % 7); }, rt));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_EQ(lines_with(msg, "  device ").size(), 1u) << msg;
  EXPECT_NE(msg.find(fmt::format("device 0: semaphore_wait on regular semaphore 'never' has 0, wants 1 (at {})", here(__FILE__, g_wait_line))),
            std::string::npos)
      << msg;
  EXPECT_EQ(delta.get().copies, n) << "every started copy completed before the launch ended";
  EXPECT_EQ(delta.get().bytes_copied, n * big * 4);
}

// ---- failure on one device releases the others; the runtime stays usable

/// Copies x[idx : idx+4] to y, where idx is off[0] on device `bad` and 0
/// elsewhere, then a double neighbour barrier (others wait there for `bad`).
Executable slicer(int n, int bad) {
  return kernel([bad](HbmRef<const float, 16> x, VmemRef<const std::int32_t, 1> off, HbmRef<float, 4> y) {
           auto me = axis_index("x");
           auto right = (me + 1) % axis_size("x");
           auto left = (me + axis_size("x") - 1) % axis_size("x");
           auto idx = select(me == bad, off.at(0).load(), 0);
           g_wait_line = __LINE__; sync_copy(x.at(ds(idx, 4)), y);
           auto barrier = get_barrier_semaphore();
           semaphore_signal(barrier, 1, left);
           semaphore_signal(barrier, 1, right);
           semaphore_wait(barrier, 2);
           run_scoped([&](RegularSemaphore again) {
             semaphore_signal(again, 1, left);
             semaphore_signal(again, 1, right);
             semaphore_wait(again, 2);
           });
         })
      .name("slicer")
      .collective_id(0)
      .compile(Mesh{{"x", n}});
}

TEST_P(Errors, OutOfBoundsOnOneDeviceReleasesTheOthersAndTheNextCallWorks) {
  Watchdog dog(kTestLimit, "failure release");
  const int n = GetParam();
  const int bad = n > 1 ? 1 : 0;
  const Executable exe = slicer(n, bad);
  const Array x = Array::generate<float>(n, Shape{16}, [](int d, std::int64_t i) { return static_cast<float>(100 * d + i); });
  const auto offsets = [&](std::int32_t v) { return Array::generate<std::int32_t>(n, Shape{1}, [v](int, std::int64_t) { return v; }); };
  std::string msg;
  const double secs = shortest_of(3, time_bound(1.0), [&] {
    auto out = exe(x, offsets(100));
    msg = runtime_error_of([&] { out[0].block_until_ready(); });
    EXPECT_TRUE(out[0].is_ready());
  });
  EXPECT_LT(secs, time_bound(1.0));
  EXPECT_NE(msg.find(fmt::format("device {}:", bad)), std::string::npos) << msg;
  EXPECT_NE(msg.find("index 100 (covering 100..103) is out of bounds for dimension 0 of size 16"), std::string::npos) << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_wait_line)), std::string::npos) << msg;
  EXPECT_EQ(msg.find("deadlock"), std::string::npos) << "a failure is not a deadlock: " << msg;
  // Same executable, same runtime, same barrier semaphore: works, repeatedly.
  for (int rep = 0; rep < 3; ++rep) {
    auto out = exe(x, offsets(3));
    EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) {
      return static_cast<float>(100 * d + (d == bad ? 3 : 0) + i);
    })) << "call " << rep << " after the failure";
  }
  // And failing again after succeeding is reported again.
  auto out = exe(x, offsets(13));
  EXPECT_NE(runtime_error_of([&] { out[0].block_until_ready(); }).find("index 13 (covering 13..16)"), std::string::npos);
  EXPECT_TRUE(is_right_permute(good_permute(n)(tagged(n))[0], n));
}

// The failing device never sends; its receiver is parked on a DMA wait.
TEST_P(Errors, FailureReleasesADeviceParkedOnACopy) {
  Watchdog dog(kTestLimit, "failure releases a DMA wait");
  const int n = GetParam();
  const int bad = n > 1 ? 1 : 0;
  auto exe = kernel([bad](In x, VmemRef<const std::int32_t, 1> off, Out y) {
               auto me = axis_index("x");
               auto right = (me + 1) % axis_size("x");
               run_scoped([&](VmemRef<float, 4> tmp, DmaSemaphore send, DmaSemaphore recv) {
                 auto idx = select(me == bad, off.at(0).load(), 0);
                 sync_copy(x.at(ds(idx, 4)), tmp);  // fails on `bad` before its copy starts
                 auto c = make_async_remote_copy(x, y, send, recv, right);
                 c.start();
                 c.wait();
               });
             })
                 .compile(Mesh{{"x", n}});
  auto bad_off = Array::generate<std::int32_t>(n, Shape{1}, [](int, std::int64_t) { return 1000; });
  auto out = exe(tagged(n), bad_off);
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find(fmt::format("device {}:", bad)), std::string::npos) << msg;
  auto good_off = Array::generate<std::int32_t>(n, Shape{1}, [](int, std::int64_t) { return 0; });
  EXPECT_TRUE(is_right_permute(exe(tagged(n), good_off)[0], n));
}

// Calls queued behind a failing call still run, in order, and succeed.
TEST_P(Errors, CallsQueuedBehindAFailureRun) {
  Watchdog dog(kTestLimit, "queued behind failure");
  const int n = GetParam();
  const Executable exe = slicer(n, n - 1);
  const Executable perm = good_permute(n);
  const Array x = Array::generate<float>(n, Shape{16}, [](int d, std::int64_t i) { return static_cast<float>(100 * d + i); });
  const auto offsets = [&](std::int32_t v) { return Array::generate<std::int32_t>(n, Shape{1}, [v](int, std::int64_t) { return v; }); };
  std::vector<std::vector<Array>> outs;
  for (int k = 0; k < 6; ++k) outs.push_back(k % 2 == 0 ? exe(x, offsets(k == 2 ? 50 : 2)) : perm(tagged(n)));
  for (int k = 0; k < 6; ++k) {
    if (k == 2) {
      EXPECT_NE(runtime_error_of([&] { outs[2][0].block_until_ready(); }).find("index 50"), std::string::npos);
    } else if (k % 2 == 0) {
      EXPECT_TRUE(all_shards_match<float>(outs[static_cast<std::size_t>(k)][0], [&](int d, std::int64_t i) {
        return static_cast<float>(100 * d + (d == n - 1 ? 2 : 0) + i);
      })) << "call " << k;
    } else {
      EXPECT_TRUE(is_right_permute(outs[static_cast<std::size_t>(k)][0], n)) << "call " << k;
    }
  }
}

// An Array produced by a failed call holds no result: a call that consumes
// it must fail too (with the cause), not compute silently on garbage.
TEST_P(Errors, ConsumingTheOutputOfAFailedCallFails) {
  Watchdog dog(kTestLimit, "failed input");
  const int n = GetParam();
  auto failing = kernel([](In x, Out y) {
                   sync_copy(x, y);
                   run_scoped([&](RegularSemaphore s) { semaphore_signal(s, 1); });
                 })
                     .name("failing")
                     .passes(unverified())
                     .compile(Mesh{{"x", n}});
  const Executable perm = good_permute(n);
  auto bad = failing(tagged(n))[0];
  auto next = perm(bad)[0];
  EXPECT_NE(runtime_error_of([&] { bad.block_until_ready(); }).find("kernel 'failing' ended with semaphores"),
            std::string::npos);
  bool raised = false;
  try {
    next.block_until_ready();
  } catch (const RuntimeError& e) {
    raised = true;
    const std::string what = e.what();
    EXPECT_NE(what.find("input 0 comes from a call that failed"), std::string::npos) << what;
    EXPECT_NE(what.find("kernel 'failing' ended with semaphores"), std::string::npos) << "names the cause: " << what;
  }
  EXPECT_TRUE(raised) << "a call on a failed call's output must fail, not compute on its unwritten output";
  // The runtime keeps working.
  EXPECT_TRUE(is_right_permute(perm(tagged(n))[0], n));
}

// ---- barrier semaphores across calls

TEST_P(Errors, DoubleBarrierAcrossManyBackToBackCalls) {
  Watchdog dog(kTestLimit, "double barrier, repeated");
  const int n = GetParam();
  const Executable exe = good_permute(n);
  std::vector<Array> chain{tagged(n)};
  for (int k = 0; k < 40; ++k) chain.push_back(exe(chain.back())[0]);  // dispatched without waiting
  for (std::size_t k = 0; k < chain.size(); k += 7)
    EXPECT_TRUE(all_shards_match<float>(chain[k], [&](int d, std::int64_t i) {
      return tag(mod(d - static_cast<int>(k), n), i);
    })) << "after " << k << " calls";
  EXPECT_TRUE(all_shards_match<float>(chain.back(), [&](int d, std::int64_t i) { return tag(mod(d - 40, n), i); }));
}

// Two kernels with different barrier patterns (neighbours, everyone),
// dispatched alternately without waiting: on different collective ids, and on
// the same one (id 0, good_permute's), which Pallas forbids because two
// launches may overlap on a TPU. refx runs launches one at a time
// (architecture.md, departure 4), so sharing an id is safe.
TEST_P(Errors, TwoBarrierPatternsInterleavedOnDistinctOrSharedIds) {
  Watchdog dog(kTestLimit, "two collective ids");
  const int n = GetParam();
  const Executable right = good_permute(n);
  for (const int id : {5, 0}) {
    const Executable all_to_all = kernel([n](In x, Out y) {
                                    auto b = get_barrier_semaphore();
                                    for (int d = 0; d < n; ++d) semaphore_signal(b, 1, d);
                                    semaphore_wait(b, n);
                                    sync_copy(x, y);
                                  })
                                      .collective_id(id)
                                      .compile(Mesh{{"x", n}});
    Array a = tagged(n);
    for (int k = 0; k < 10; ++k) a = (k % 2 == 0 ? right : all_to_all)(a)[0];
    EXPECT_TRUE(all_shards_match<float>(a, [&](int d, std::int64_t i) { return tag(mod(d - 5, n), i); }))
        << "collective id " << id;
  }
}

// get_barrier_semaphore without a collective id is a trace error with the line.
TEST(ErrorsTrace, BarrierSemaphoreNeedsACollectiveId) {
  const std::string msg = error_of([] {
    (void)kernel([](In x, Out y) {
      sync_copy(x, y);
      semaphore_signal(get_barrier_semaphore(), 1);
    }).compile(Mesh{{"x", 2}});
  });
  EXPECT_NE(msg.find("get_barrier_semaphore needs a collective id"), std::string::npos) << msg;
}

// A kernel without outputs: its failure must still be observable.
TEST(ErrorsNoOutputs, EffectsBarrierSurfacesAFailure) {
  Watchdog dog(kTestLimit, "effects_barrier error");
  Runtime rt;
  auto exe = kernel([](In) {
               run_scoped([&](RegularSemaphore never) { semaphore_wait(never, 1); });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", 2}}, {}, rt);
  auto out = exe(Array::generate<float>(2, Shape{kBlock}, tag, rt));
  EXPECT_TRUE(out.empty());
  bool threw = false;
  try {
    effects_barrier(rt);
  } catch (const RuntimeError& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(threw) << "a failing kernel without outputs must be reported by effects_barrier";
}

// The race detector's vector clocks live in one process: a Runtime with a
// transport to other processes refuses it when it is made, naming the option.
// The transport here is a stub that is never called (no launch is made).
struct UnusedRemote final : transport::Remote {
  transport::Placement placement() const override { return {}; }
  void started(std::int64_t, std::shared_ptr<transport::Receiver>) override {}
  void signal(int, const transport::RemoteSignal&) override {}
  void copy(int, const transport::RemoteCopy&, const std::byte*, std::shared_ptr<void>,
            std::function<void()>) override {}
  void failed(std::int64_t, const std::string&) override {}
  void report(transport::Report) override {}
  void finished(std::int64_t) override {}
};

TEST(RuntimeOptionsErrors, RaceDetectorWithATransportIsRefused) {
  RuntimeOptions o;
  o.detect_races = true;
  o.transport = std::make_shared<UnusedRemote>();
  try {
    Runtime rt(o);
    FAIL() << "a Runtime with a transport accepted detect_races";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "refx: RuntimeOptions::detect_races is in-process only (its vector clocks do not cross ranks)");
  }
  o.detect_races = false;
  Runtime without(o);  // the same transport without the detector is accepted
  EXPECT_EQ(without.remote(), o.transport.get());
}

}  // namespace
