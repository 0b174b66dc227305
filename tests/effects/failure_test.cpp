// Failures in host effects and on devices: reported at block_until_ready /
// effects_barrier as a RuntimeError naming the device and the source line,
// once; the token state is reset so later programs run normally (JAX issue
// #37587: an old error must not be raised again by later, unrelated calls).

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "effects/effects_testing.hpp"

namespace {

using namespace refx;
using namespace refx::effects_testing;

using Tag = VmemRef<const std::int32_t, 1>;

int g_throw_line = 0;

/// Throws from device 1's ordered callback when the input is negative.
Executable throwing_callback(Runtime& rt, Log<std::string>& log) {
  return kernel([&log](Tag t) {
           auto me = axis_index("x");
           g_throw_line = __LINE__ + 1;
           io_callback(ordered, [&log](std::int32_t k, std::int32_t d) {
             if (k < 0 && d == 1) throw std::runtime_error("boom");
             log.add(std::to_string(k) + ":" + std::to_string(d));
           }, t.at(0).load(), me);
         })
      .name("throwing")
      .compile(Mesh{{"x", 2}}, {}, rt);
}

TEST(Failure, CallbackErrorAtBarrierNamesDeviceAndLine) {
  Watchdog dog;
  Runtime rt;
  Log<std::string> log;
  auto exe = throwing_callback(rt, log);
  exe(scalar_array(2, -1, rt));
  std::string msg;
  try {
    effects_barrier(rt);
    ADD_FAILURE() << "effects_barrier did not report the failure";
  } catch (const RuntimeError& e) {
    msg = e.what();
    // The user's exception is nested inside.
    try {
      std::rethrow_if_nested(e);
      ADD_FAILURE() << "no nested exception";
    } catch (const std::runtime_error& inner) {
      EXPECT_STREQ(inner.what(), "boom");
    }
  }
  EXPECT_TRUE(contains(msg, "device 1")) << msg;
  EXPECT_TRUE(contains(msg, "io_callback at")) << msg;
  EXPECT_TRUE(contains(msg, "failure_test.cpp:" + std::to_string(g_throw_line))) << msg;
  EXPECT_TRUE(contains(msg, "boom")) << msg;
  EXPECT_EQ(log.items(), std::vector<std::string>{"-1:0"}) << "device 0's effect comes before the failing one";
  // Reported once: the token state was reset.
  EXPECT_NO_THROW(effects_barrier(rt));
}

TEST(Failure, RecoveryAfterAFailedOrderedCallback) {
  Watchdog dog;
  Runtime rt;
  Log<std::string> log;
  auto exe = throwing_callback(rt, log);
  exe(scalar_array(2, -1, rt));
  EXPECT_THROW(effects_barrier(rt), RuntimeError);
  // The next programs' ordered effects run, and the old error stays gone.
  for (int k = 0; k < 3; ++k) exe(scalar_array(2, k, rt));
  EXPECT_NO_THROW(effects_barrier(rt));
  EXPECT_EQ(log.items(), (std::vector<std::string>{"-1:0", "0:0", "0:1", "1:0", "1:1", "2:0", "2:1"}));
  EXPECT_FALSE(runtime_token(OrderedEffect::io_callback, rt).valid());
}

// Dispatched before the failure is known, the later programs still run
// (a failed dependency does not fail its dependents); the barrier reports
// the failure once.
TEST(Failure, ProgramsAfterAFailureInFlightStillRun) {
  Watchdog dog;
  Runtime rt;
  Log<std::string> log;
  auto exe = throwing_callback(rt, log);
  exe(scalar_array(2, -1, rt));
  exe(scalar_array(2, 7, rt));
  EXPECT_THROW(effects_barrier(rt), RuntimeError);
  EXPECT_EQ(log.items(), (std::vector<std::string>{"-1:0", "7:0", "7:1"}));
  EXPECT_NO_THROW(effects_barrier(rt));
}

// A program with outputs reports the failure at block_until_ready; once the
// thread's tokens have moved on to later programs, the barrier does not
// raise it again (JAX #37587).
TEST(Failure, ErrorSeenAtBlockUntilReadyIsNotRaisedAgainLater) {
  Watchdog dog;
  Runtime rt;
  Log<int> log;
  auto exe = kernel([&log](Tag t, VmemRef<std::int32_t, 1> y) {
               y.store(t.load());
               io_callback(ordered, [&log](std::int32_t k) {
                 if (k < 0) throw std::runtime_error("negative");
                 log.add(k);
               }, t.at(0).load());
             }).compile(Mesh{{"x", 2}}, {}, rt);
  auto bad = exe(scalar_array(2, -1, rt));
  const std::string msg = runtime_error_of([&] { bad[0].block_until_ready(); });
  EXPECT_TRUE(contains(msg, "negative")) << msg;
  EXPECT_TRUE(contains(msg, "device 0")) << msg;
  auto good = exe(scalar_array(2, 3, rt));
  EXPECT_EQ(good[0].to_host<std::int32_t>(1), std::vector<std::int32_t>{3});
  EXPECT_NO_THROW(effects_barrier(rt));
  EXPECT_EQ(log.items(), (std::vector<int>{3, 3}));
}

// A failed program without outputs is reported by the next barrier even if
// later programs replaced its tokens (nothing else could report it).
TEST(Failure, FailureOfAProgramWithoutOutputsIsNeverLost) {
  Watchdog dog;
  Runtime rt;
  Log<std::string> log;
  auto exe = throwing_callback(rt, log);
  auto other = kernel([](Tag) { io_callback(ordered, [] {}); }).compile(Mesh{{"x", 2}}, {}, rt);
  exe(scalar_array(2, -1, rt));
  for (int k = 0; k < 100; ++k) other(scalar_array(2, k, rt));  // replaces every token, prunes finished ones
  const std::string msg = runtime_error_of([&] { effects_barrier(rt); });
  EXPECT_TRUE(contains(msg, "boom")) << msg;
  EXPECT_NO_THROW(effects_barrier(rt));
}

// Two failures before a barrier: the first (in dispatch order) is raised.
TEST(Failure, FirstFailureInDispatchOrderIsRaised) {
  Watchdog dog;
  Runtime rt;
  auto fail_with = [&](const char* what) {
    return kernel([what](Tag) { io_callback(ordered, [what] { throw std::runtime_error(what); }); })
        .compile(Mesh{{"x", 1}}, {}, rt);
  };
  auto first = fail_with("first failure");
  auto second = fail_with("second failure");
  first(scalar_array(1, 0, rt));
  second(scalar_array(1, 0, rt));
  const std::string msg = runtime_error_of([&] { effects_barrier(rt); });
  EXPECT_TRUE(contains(msg, "first failure")) << msg;
  EXPECT_NO_THROW(effects_barrier(rt));
}

// A failed ordered effect ends its chain in that program: what comes after it
// in (sequence, device) order is not performed; other kinds are unaffected.
TEST(Failure, ChainStopsAtTheFailedEffect) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  Log<std::string> log;
  auto exe = kernel([&log](Tag) {
               auto me = axis_index("x");
               fori_loop(0, 2, [&](Scalar<std::int32_t> s) {
                 io_callback(ordered, [&log](std::int32_t ss, std::int32_t d) {
                   if (ss == 0 && d == 1) throw std::runtime_error("stop");
                   log.add(std::to_string(ss) + ":" + std::to_string(d));
                 }, s, me);
                 debug_print(ordered, "{}:{}", s, me);
               });
             }).compile(Mesh{{"x", 3}}, {}, rt);
  exe(scalar_array(3, 0, rt));
  EXPECT_THROW(effects_barrier(rt), RuntimeError);
  EXPECT_EQ(log.items(), std::vector<std::string>{"0:0"});
  // The print chain is independent, but devices reaching prints after the
  // failure became known are released without performing them: whatever
  // appears keeps the (sequence, device) order.
  const std::vector<std::string> all{"0:0", "0:1", "0:2", "1:0", "1:1", "1:2"};
  std::size_t next = 0;
  for (const auto& line : cap.lines()) {
    while (next < all.size() && all[next] != line) ++next;
    ASSERT_LT(next, all.size()) << "'" << line << "' is out of order";
    ++next;
  }
}

// An unordered callback failing stops its device (later effects there do not
// happen) and surfaces at the barrier.
TEST(Failure, UnorderedCallbackFailureStopsTheDevice) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  auto exe = kernel([](Tag) {
               auto me = axis_index("x");
               when(me == 0, [&] { io_callback([] { throw std::runtime_error("unordered boom"); }); });
               when(me == 0, [&] { debug_print("after"); });
             }).compile(Mesh{{"x", 2}}, {}, rt);
  exe(scalar_array(2, 0, rt));
  const std::string msg = runtime_error_of([&] { effects_barrier(rt); });
  EXPECT_TRUE(contains(msg, "device 0")) << msg;
  EXPECT_TRUE(contains(msg, "unordered boom")) << msg;
  EXPECT_TRUE(cap.lines().empty());
}

// A device failure (out of bounds) after ordered prints: the prints the
// devices reached before the failure still appear, in order.
TEST(Failure, PrintsBeforeADeviceFailureAreFlushed) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  auto exe = kernel([](VmemRef<const std::int32_t, 4> t) {
               auto me = axis_index("x");
               debug_print(ordered, "before d{}", me);
               run_scoped([&](RegularSemaphore printed) {
                 // Device 1 fails only after device 0 has reached its print.
                 when(me == 0, [&] { semaphore_signal(printed, 1, 1); });
                 when(me == 1, [&] {
                   semaphore_wait(printed, 1);
                   // Out of bounds. The start reads the semaphore (0 after the
                   // wait) so that the load stays after the wait: with a start
                   // of me * 4 alone the scheduler may hoist the load of a
                   // read-only input above it, and device 1 then fails before
                   // device 0 printed (a flake under load, found at 5122c4f).
                   debug_print("{}", t.at(ds(me * 4 + semaphore_read(printed), 4)).load());
                 });
               });
             }).compile(Mesh{{"x", 2}}, {}, rt);
  exe(Array::generate<std::int32_t>(2, Shape{4}, [](int, std::int64_t i) { return static_cast<std::int32_t>(i); }, rt));
  const std::string msg = runtime_error_of([&] { effects_barrier(rt); });
  EXPECT_TRUE(contains(msg, "out of bounds")) << msg;
  EXPECT_EQ(cap.lines(), (std::vector<std::string>{"before d0", "before d1"}));
}

// A program whose input comes from a failed call does not run (its effects
// do not happen) and fails with the cause; the next programs run normally.
TEST(Failure, InputFromAFailedCallFailsTheConsumer) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  auto producer = kernel([](Tag t, VmemRef<std::int32_t, 1> y) {
                    y.store(t.load());
                    io_callback([](std::int32_t k) {
                      if (k < 0) throw std::runtime_error("bad producer");
                    }, t.at(0).load());
                  })
                      .name("producer")
                      .compile(Mesh{{"x", 2}}, {}, rt);
  auto consumer = kernel([](Tag t) { debug_print(ordered, "consumed {}", t.at(0).load()); })
                      .name("consumer")
                      .compile(Mesh{{"x", 2}}, {}, rt);
  auto bad = producer(scalar_array(2, -1, rt))[0];
  consumer(bad);
  const std::string msg = runtime_error_of([&] { effects_barrier(rt); });
  EXPECT_TRUE(contains(msg, "bad producer")) << msg;
  EXPECT_TRUE(cap.lines().empty()) << "the consumer ran on the failed call's output";
  consumer(producer(scalar_array(2, 4, rt))[0]);
  EXPECT_NO_THROW(effects_barrier(rt));
  EXPECT_EQ(cap.lines(), (std::vector<std::string>{"consumed 4", "consumed 4"}));
}

// A print sink that throws fails the program like a callback would.
TEST(Failure, ThrowingSinkIsReported) {
  Watchdog dog;
  Runtime rt;
  rt.set_print_sink([](std::string_view) { throw std::runtime_error("sink full"); });
  auto exe = kernel([](Tag) { debug_print(ordered, "x"); }).compile(Mesh{{"x", 2}}, {}, rt);
  exe(scalar_array(2, 0, rt));
  const std::string msg = runtime_error_of([&] { effects_barrier(rt); });
  EXPECT_TRUE(contains(msg, "debug_print at")) << msg;
  EXPECT_TRUE(contains(msg, "sink full")) << msg;
  rt.set_print_sink({});  // back to stdout
}

// A run-time format string that does not fit its values fails at run time.
TEST(Failure, BadRuntimeFormatIsReported) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  const std::string fmt_text = "{:d}";
  auto exe = kernel([&](Tag) { debug_print(fmt::runtime(fmt_text), 1.5f); }).compile(Mesh{{"x", 1}}, {}, rt);
  exe(scalar_array(1, 0, rt));
  const std::string msg = runtime_error_of([&] { effects_barrier(rt); });
  EXPECT_TRUE(contains(msg, "device 0")) << msg;
  EXPECT_TRUE(contains(msg, "debug_print at")) << msg;
  EXPECT_TRUE(cap.lines().empty());
}

}  // namespace
