// Launches that skip the queue. Bound launches (RuntimeOptions::
// bound_launch_bytes, runtime/detail/bound_launch.hpp): a static
// communication program replays the copies, signals and waits recorded at
// its first call. Checked here: bound runs give the evaluator's results, call
// after call and on other Arrays; what may not bind (data, effects, scratch,
// checked modes, more devices than workers, a wait nobody signals, a
// semaphore left non-zero) runs on the evaluator and fails as before; bound
// runs keep the dispatch order with launches around them, from one host
// thread or several, and hold what they use as long as they run.
//
// Inline launches (RuntimeOptions::inline_launch_bytes, Runtime::run_inline):
// a small program that only computes, on one device, runs on the calling
// thread. Checked here: its outputs are ready when the call returns and
// right; what may not run inline (loops, semaphores, copies, host effects,
// several devices, large values or dots, checked modes, a busy runtime or an
// unfinished input) takes the queue and keeps the dispatch order; a failure
// comes back through the outputs and the next call works.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kBlock = 64;
using In = VmemRef<const float, kBlock>;
using Out = VmemRef<float, kBlock>;

RuntimeOptions with_workers(int n, std::size_t bound_bytes = RuntimeOptions{}.bound_launch_bytes) {
  RuntimeOptions o;
  o.workers = static_cast<unsigned>(std::max(n, 2));
  o.bound_launch_bytes = bound_bytes;
  return o;
}

Array gathered_input(int n, int call, Runtime& rt) {
  return Array::generate<float>(
      n, Shape{n, kBlock}, [call](int d, std::int64_t i) { return tag(d, i) + static_cast<float>(call); }, rt);
}

/// Row r of every device holds device r's row r of the input made for `call`.
void expect_gathered(const Array& x, int n, int call) {
  for (int d = 0; d < n; ++d) {
    const std::vector<float> h = x.to_host<float>(d);
    for (int r = 0; r < n; ++r)
      for (std::int64_t i = 0; i < kBlock; ++i)
        ASSERT_EQ(h[static_cast<std::size_t>(r * kBlock + i)], tag(r, r * kBlock + i) + static_cast<float>(call))
            << "device " << d << ", row " << r << ", element " << i << ", call " << call;
  }
}

/// y = x of the left neighbour, with a regular-semaphore handshake first and
/// the copy in `steps` pieces by a loop: signals, waits, a loop, copies.
Executable handshake_permute(int n, int steps, Runtime& rt) {
  return kernel([n, steps](In x, Out y) {
           const auto right = (axis_index("x") + 1) % n;
           const auto left = (axis_index("x") + n - 1) % n;
           run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
             semaphore_signal(ready, 1, left);  // my y is free
             semaphore_wait(ready, 1);          // the right neighbour's is
             const std::int64_t piece = kBlock / steps;
             fori_loop(0, steps, [&](Scalar<std::int32_t> s) {
               auto c = make_async_remote_copy(x.at(ds(s * piece, piece)), y.at(ds(s * piece, piece)), send, recv,
                                               right);
               c.start();
               c.wait();
             });
           });
         })
      .name("handshake_permute")
      .compile(Mesh{{"x", n}}, {}, rt);
}

bool is_left_copy(const Array& y, int n, int call) {
  for (int d = 0; d < n; ++d) {
    const int left = mod(d - 1, n);
    const std::vector<float> h = y.to_host<float>(d);
    for (std::int64_t i = 0; i < kBlock; ++i)
      if (h[static_cast<std::size_t>(i)] != tag(left, i) + static_cast<float>(call)) return false;
  }
  return true;
}

Array tagged(int n, int call, Runtime& rt) {
  return Array::generate<float>(
      n, Shape{kBlock}, [call](int d, std::int64_t i) { return tag(d, i) + static_cast<float>(call); }, rt);
}

// y = x, copied by the last device alone: device 0 has nothing to do, so a
// call's dispatch returns while the last device is still copying.
constexpr std::int64_t kLong = 64 * 1024;  // 256 KiB of floats
Executable last_device_copies(int n, Runtime& rt) {
  return kernel([n](VmemRef<const float, kLong> x, VmemRef<float, kLong> y) {
           when(axis_index("x") == n - 1, [&] {
             run_scoped([&](DmaSemaphore done) {
               auto c = make_async_copy(x, y, done);
               c.start();
               c.wait();
             });
           });
         })
      .name("last_device_copies")
      .compile(Mesh{{"x", n}}, {}, rt);
}

// A task pushed to a worker runs on that worker, whether it was polling or
// asleep, and a host thread helping the pool never takes it.
TEST(WorkerPoolMail, ATaskForAWorkerRunsOnIt) {
  Watchdog dog(kTestLimit, "push_to");
  WorkerPool pool(3, std::chrono::microseconds(200));
  for (int round = 0; round < 20; ++round) {
    // Every other round, let the workers' poll window pass: they sleep.
    if (round % 2 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const unsigned w = static_cast<unsigned>(round % 3);
    std::atomic<int> ran_on{-2};
    pool.push_to(w, [&] { ran_on = pool.worker_index(); });
    bool host_ran = false;
    while (ran_on.load() == -2) host_ran = pool.run_one() || host_ran;
    EXPECT_FALSE(host_ran) << "round " << round;
    EXPECT_EQ(ran_on.load(), static_cast<int>(w)) << "round " << round;
  }
}

class BoundLaunch : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Devices, BoundLaunch, device_counts(), DeviceCountName{});

TEST_P(BoundLaunch, AllGatherRunsBoundAndGathers) {
  Watchdog dog(kTestLimit, "bound all-gather");
  const int n = GetParam();
  for (collectives::Algorithm a : {collectives::Algorithm::direct, collectives::Algorithm::ring}) {
    Runtime rt(with_workers(n));
    collectives::ProgramOptions o;
    o.in_place = true;
    o.algorithm = a;
    const Executable exe = collectives::all_gather_program<float>(Mesh{{"x", n}}, kBlock, o, rt);
    // Three Arrays in turn: the plan binds each call's own buffers.
    std::vector<Array> xs;
    for (int k = 0; k < 3; ++k) xs.push_back(gathered_input(n, k, rt));
    constexpr int calls = 30;
    for (int c = 0; c < calls; ++c) {
      Array& x = xs[static_cast<std::size_t>(c % 3)];
      exe.call_in_place({x});
      x.block_until_ready();
      expect_gathered(x, n, c % 3);
    }
    EXPECT_EQ(rt.totals().bound, calls) << collectives::algorithm_name(a);
    EXPECT_EQ(rt.launches(), calls);
    // What a launch copies is counted as on the evaluator.
    Runtime plain(with_workers(n, 0));
    const Executable same = collectives::all_gather_program<float>(Mesh{{"x", n}}, kBlock, o, plain);
    Array y = gathered_input(n, 0, plain);
    same.call_in_place({y});
    y.block_until_ready();
    EXPECT_EQ(plain.totals().bound, 0);
    EXPECT_EQ(rt.totals().bytes_copied, calls * plain.totals().bytes_copied);
    EXPECT_EQ(rt.totals().copies, calls * plain.totals().copies);
  }
}

TEST_P(BoundLaunch, SignalsWaitsAndLoopsBind) {
  Watchdog dog(kTestLimit, "bound permute");
  const int n = GetParam();
  Runtime rt(with_workers(n));
  const Executable exe = handshake_permute(n, 4, rt);
  for (int c = 0; c < 20; ++c) {
    auto y = exe(tagged(n, c, rt));
    ASSERT_TRUE(is_left_copy(y[0], n, c)) << "call " << c;
  }
  EXPECT_EQ(rt.totals().bound, 20);
}

TEST_P(BoundLaunch, AsynchronousCallsKeepTheirOrder) {
  Watchdog dog(kTestLimit, "bound, asynchronous");
  const int n = GetParam();
  Runtime rt(with_workers(n));
  const Executable exe = handshake_permute(n, 2, rt);
  // Each call reads what the one before it wrote: y1 = permute(x), y2 = permute(y1), ...
  std::vector<Array> chain{tagged(n, 0, rt)};
  for (int c = 0; c < 24; ++c) chain.push_back(exe(chain.back())[0]);
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const std::vector<float> h = chain[k].to_host<float>(0);
    for (std::int64_t i = 0; i < kBlock; ++i)
      ASSERT_EQ(h[static_cast<std::size_t>(i)], tag(mod(-static_cast<int>(k), n), i)) << "link " << k;
  }
}

// Calls dispatched back to back, each reading what the one before it wrote,
// find that call still ending on a worker: each waits for it (for at most
// Runtime::bound_wait) and runs bound, instead of taking the queue, where
// every later call of the chain would follow it.
TEST_P(BoundLaunch, ChainedCallsWaitForTheRunBeforeThem) {
  const int n = GetParam();
  if (n < 2) GTEST_SKIP() << "device 0 is the last device: a call ends with its dispatch";
  if (static_cast<unsigned>(n) > std::thread::hardware_concurrency())
    GTEST_SKIP() << "more devices than cores: a device may wait for a core longer than a call waits for it";
  Watchdog dog(kTestLimit, "bound, chained");
  Runtime rt(with_workers(n));
  const Executable exe = last_device_copies(n, rt);
  constexpr int links = 5;
  std::int64_t most = 0;
  int rounds = 0;
  // Until a round runs every link bound (or 200 rounds did not).
  for (; rounds < 200 && most < links; ++rounds) {
    const std::int64_t before = rt.totals().bound;
    Array x = Array::generate<float>(
        n, Shape{kLong}, [rounds](int d, std::int64_t i) { return tag(d, i) + static_cast<float>(rounds); }, rt);
    for (int k = 0; k < links; ++k) x = exe(x)[0];
    const std::vector<float> h = x.to_host<float>(n - 1);  // waits
    for (std::int64_t i = 0; i < kLong; ++i)
      ASSERT_EQ(h[static_cast<std::size_t>(i)], tag(n - 1, i) + static_cast<float>(rounds)) << "round " << rounds;
    most = std::max(most, rt.totals().bound - before);
  }
  // A link whose worker lost its core for longer than bound_wait takes the
  // queue, and the rest of its chain with it; in a quiet round, none does.
  EXPECT_EQ(most, links) << "after " << rounds << " rounds";
  EXPECT_EQ(rt.launches(), rounds * links);
}

TEST_P(BoundLaunch, BetweenEvaluatorLaunches) {
  Watchdog dog(kTestLimit, "bound between evaluator launches");
  const int n = GetParam();
  Runtime rt(with_workers(n));
  // Not static (it computes): runs on the evaluator, before and after the bound calls.
  const Executable twice = kernel([](In x, Out y) { y.store(x.load() * 2.0f); }).compile(Mesh{{"x", n}}, {}, rt);
  const Executable permute = handshake_permute(n, 1, rt);
  Array x = tagged(n, 0, rt);
  for (int c = 0; c < 10; ++c) x = permute(twice(permute(x)[0])[0])[0];
  rt.drain();
  const std::vector<float> h = x.to_host<float>(0);
  const float scale = 1024.0f;  // 2^10
  for (std::int64_t i = 0; i < kBlock; ++i)
    ASSERT_EQ(h[static_cast<std::size_t>(i)], tag(mod(-20, n), i) * scale) << "element " << i;
  EXPECT_GT(rt.totals().bound, 0);
  EXPECT_EQ(rt.launches(), 30);
}

TEST_P(BoundLaunch, FromSeveralHostThreads) {
  Watchdog dog(kTestLimit, "bound from several threads");
  const int n = GetParam();
  Runtime rt(with_workers(n));
  const Executable exe = handshake_permute(n, 2, rt);
  constexpr int threads = 3, calls = 40;
  std::vector<int> wrong(threads, 0);
  std::vector<std::thread> hosts;
  for (int t = 0; t < threads; ++t)
    hosts.emplace_back([&, t] {
      for (int c = 0; c < calls; ++c) {
        auto y = exe(tagged(n, t * 1000 + c, rt));
        if (!is_left_copy(y[0], n, t * 1000 + c)) ++wrong[static_cast<std::size_t>(t)];
      }
    });
  for (auto& h : hosts) h.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(wrong[static_cast<std::size_t>(t)], 0) << "thread " << t;
  EXPECT_EQ(rt.launches(), threads * calls);
}

// A bound run holds its Arrays until it ends and no longer, and its program
// even when the Executable is gone first.
TEST_P(BoundLaunch, ARunHoldsItsArgumentsAndProgramUntilItEnds) {
  Watchdog dog(kTestLimit, "bound lifetimes");
  const int n = GetParam();
  Runtime rt(with_workers(n));
  collectives::ProgramOptions o;
  o.in_place = true;
  Array x = gathered_input(n, 0, rt);
  const long owners = x.keep_alive().use_count();
  for (int c = 0; c < 3; ++c) {
    std::optional<Executable> exe = collectives::all_gather_program<float>(Mesh{{"x", n}}, kBlock, o, rt);
    exe->call_in_place({x});
    exe.reset();
    x.block_until_ready();
    expect_gathered(x, n, 0);
    EXPECT_EQ(x.keep_alive().use_count(), owners) << "call " << c;
  }
  EXPECT_EQ(rt.totals().bound, 3);
}

// ---- what does not bind runs on the evaluator, with the same results and errors

// Runtime::enqueue on Arrays unchecked by an Executable: a bound program given
// Arrays of other shapes takes the queue, which reports them; nothing is replayed.
TEST_P(BoundLaunch, ArraysOfOtherShapesTakeTheQueue) {
  Watchdog dog(kTestLimit, "bound, other shapes");
  const int n = GetParam();
  Runtime rt(with_workers(n));
  const Executable exe = handshake_permute(n, 1, rt);
  EXPECT_TRUE(is_left_copy(exe(tagged(n, 0, rt))[0], n, 0));
  EXPECT_EQ(rt.totals().bound, 1);
  const std::shared_ptr<const Program> program(std::shared_ptr<const Program>{}, &exe.program());  // not owned
  const Array half = Array::empty(n, DType::f32, Shape{kBlock / 2}, rt);
  const std::shared_ptr<Event> done = rt.enqueue(program, {half, Array::empty(n, DType::f32, Shape{kBlock / 2}, rt)});
  const std::string msg = error_of([&] { done->wait(); });
  EXPECT_NE(msg.find(fmt::format("kernel argument 0 is f32[{}] but the kernel expects f32[{}]", kBlock / 2, kBlock)),
            std::string::npos)
      << msg;
  EXPECT_EQ(rt.totals().bound, 1);
  // The runtime goes on, bound. A launch through the queue sets its event
  // before it frees the runtime, so a call made just as one ends may take
  // the queue too, and so may the call after that one: call until two have
  // run bound (at most 20 calls).
  for (int c = 1; c <= 20 && rt.totals().bound < 3; ++c)
    EXPECT_TRUE(is_left_copy(exe(tagged(n, c, rt))[0], n, c)) << "call " << c;
  EXPECT_GE(rt.totals().bound, 3);
}

TEST_P(BoundLaunch, WhatDoesNotBindRunsAsBefore) {
  Watchdog dog(kTestLimit, "not bound");
  const int n = GetParam();
  const auto bound_calls = [&](RuntimeOptions o, auto&& make) {
    Runtime rt(o);
    const Executable exe = make(rt);
    for (int c = 0; c < 3; ++c) {
      auto y = exe(tagged(n, c, rt));
      EXPECT_TRUE(is_left_copy(y[0], n, c)) << "call " << c;
    }
    return rt.totals().bound;
  };
  const auto permute = [&](Runtime& rt) { return handshake_permute(n, 1, rt); };
  // Through scratch: the copy's source is not an argument.
  const auto staged = [&](Runtime& rt) {
    return kernel([n](In x, Out y) {
             run_scoped([&](VmemRef<float, kBlock> buf, DmaSemaphore local, DmaSemaphore send, DmaSemaphore recv) {
               auto in = make_async_copy(x, buf, local);
               in.start();
               in.wait();
               auto c = make_async_remote_copy(buf, y, send, recv, (axis_index("x") + 1) % n);
               c.start();
               c.wait();
             });
           })
        .compile(Mesh{{"x", n}}, {}, rt);
  };
  // With a host effect.
  const auto printing = [&](Runtime& rt) {
    rt.set_print_sink([](std::string_view) {});
    return kernel([n](In x, Out y) {
             debug_print("device {}", axis_index("x"));
             run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
               auto c = make_async_remote_copy(x, y, send, recv, (axis_index("x") + 1) % n);
               c.start();
               c.wait();
             });
           })
        .compile(Mesh{{"x", n}}, {}, rt);
  };
  // A negative signal: whether a wait passes would depend on the interleaving.
  const auto negative = [&](Runtime& rt) {
    return kernel([n](In x, Out y) {
             run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
               const auto left = (axis_index("x") + n - 1) % n;
               semaphore_signal(ready, 2, left);
               semaphore_signal(ready, -1, left);
               semaphore_wait(ready, 1);
               auto c = make_async_remote_copy(x, y, send, recv, (axis_index("x") + 1) % n);
               c.start();
               c.wait();
             });
           })
        .passes(unverified())
        .compile(Mesh{{"x", n}}, {}, rt);
  };
  EXPECT_EQ(bound_calls(with_workers(n), permute), 3);
  EXPECT_EQ(bound_calls(with_workers(n), negative), 0);
  EXPECT_EQ(bound_calls(with_workers(n), staged), 0);
  EXPECT_EQ(bound_calls(with_workers(n), printing), 0);
  EXPECT_EQ(bound_calls(with_workers(n, 0), permute), 0);
  RuntimeOptions checked = with_workers(n);
  checked.detect_races = true;
  EXPECT_EQ(bound_calls(checked, permute), 0);
  checked = with_workers(n);
  checked.lazy_copies = true;
  EXPECT_EQ(bound_calls(checked, permute), 0);
  checked = with_workers(n);
  checked.record_timeline = true;
  EXPECT_EQ(bound_calls(checked, permute), 0);
  if (n > 2) {
    RuntimeOptions few = with_workers(n);
    few.workers = static_cast<unsigned>(n - 1);  // a device without a thread of its own
    EXPECT_EQ(bound_calls(few, permute), 0);
  }
}

TEST_P(BoundLaunch, ABrokenProgramDoesNotBindAndFailsAsBefore) {
  Watchdog dog(kTestLimit, "broken programs");
  const int n = GetParam();
  Runtime rt(with_workers(n));
  const auto error_of = [&](const Executable& exe) {
    auto y = exe(tagged(n, 0, rt));
    return runtime_error_of([&] { y[0].block_until_ready(); });
  };
  // Every device leaves 3 on its semaphore.
  const Executable leaky = kernel([](In x, Out y) {
                             sync_copy(x, y);
                             run_scoped([&](RegularSemaphore s) { semaphore_signal(s, 3); });
                           })
                               .name("leaky")
                               .passes(unverified())
                               .compile(Mesh{{"x", n}}, {}, rt);
  std::string msg = error_of(leaky);
  EXPECT_NE(msg.find("kernel 'leaky' ended with semaphores not back to 0"), std::string::npos) << msg;
  EXPECT_EQ(lines_with(msg, "ends at 3").size(), static_cast<std::size_t>(n)) << msg;
  const Executable stuck = kernel([](In x, Out y) {
                             sync_copy(x, y);
                             run_scoped([&](RegularSemaphore never) { semaphore_wait(never, 1); });
                           })
                               .name("stuck")
                               .passes(unverified())
                               .compile(Mesh{{"x", n}}, {}, rt);
  msg = error_of(stuck);
  EXPECT_NE(msg.find(fmt::format("deadlock in kernel 'stuck' on mesh {{x={}}}", n)), std::string::npos) << msg;
  EXPECT_EQ(rt.totals().bound, 0);
  // The runtime goes on, bound.
  auto y = handshake_permute(n, 1, rt)(tagged(n, 5, rt));
  EXPECT_TRUE(is_left_copy(y[0], n, 5));
  EXPECT_EQ(rt.totals().bound, 1);
}

// ---- inline launches

using Block = VmemRef<const float, kBlock>;
using BlockOut = VmemRef<float, kBlock>;

Array ramp(Runtime& rt, int call = 0, int n = 1, Shape shape = Shape{kBlock}) {
  return Array::generate<float>(
      n, shape, [call](int d, std::int64_t i) { return tag(d, i) + static_cast<float>(call); }, rt);
}

Executable affine(Runtime& rt, int n = 1) {
  return kernel([](Block x, BlockOut y) { y.store(x.load() * 2.0f + 1.0f); }).name("affine").compile(Mesh{{"x", n}}, {}, rt);
}

bool is_affine_of(const Array& y, int call) {
  return static_cast<bool>(all_shards_match<float>(
      y, [call](int d, std::int64_t i) { return (tag(d, i) + static_cast<float>(call)) * 2.0f + 1.0f; }));
}

TEST(InlineLaunch, OneDeviceComputeIsReadyWhenTheCallReturns) {
  Watchdog dog(kTestLimit, "inline launch");
  Runtime rt(with_workers(2));
  const Executable exe = affine(rt);
  constexpr int calls = 10;
  for (int c = 0; c < calls; ++c) {
    auto y = exe(ramp(rt, c));
    EXPECT_TRUE(y[0].is_ready()) << "call " << c;
    EXPECT_TRUE(is_affine_of(y[0], c)) << "call " << c;
  }
  const LaunchStats t = rt.totals();
  EXPECT_EQ(t.inlined, calls);
  EXPECT_EQ(rt.launches(), calls);
  EXPECT_EQ(t.contexts_built, 1) << "later calls reuse the first one's state";
  EXPECT_EQ(t.bound, 0);
}

TEST(InlineLaunch, WhatMayNotRunInlineTakesTheQueue) {
  Watchdog dog(kTestLimit, "not inline");
  // Three calls of the kernel `make(rt)` builds on a runtime with options
  // `o`, on inputs of `shape`, each checked against `want`: how many ran inline.
  const auto inlined = [](RuntimeOptions o, const auto& make, const auto& want, Shape shape = Shape{kBlock}) {
    Runtime rt(o);
    rt.set_print_sink([](std::string_view) {});
    const Executable exe = make(rt);
    for (int c = 0; c < 3; ++c) {
      auto y = exe(ramp(rt, c, exe.mesh().size(), shape));
      EXPECT_TRUE(want(y[0], c)) << "call " << c;
    }
    return rt.totals().inlined;
  };
  const auto plain = [](Runtime& rt) { return affine(rt); };
  const auto two_devices = [](Runtime& rt) { return affine(rt, 2); };
  const auto looping = [](Runtime& rt) {
    return kernel([](Block x, BlockOut y) {
             y.store(x.load());
             fori_loop(0, 2, [&](Scalar<std::int32_t>) { y.store(y.load() + y.load()); });
             y.store(y.load() * 0.5f + 1.0f);
           })
        .compile(Mesh{{"x", 1}}, {}, rt);
  };
  const auto copying = [](Runtime& rt) {
    return kernel([](Block x, BlockOut y) {
             sync_copy(x, y);
             y.store(y.load() * 2.0f + 1.0f);
           })
        .compile(Mesh{{"x", 1}}, {}, rt);
  };
  const auto printing = [](Runtime& rt) {
    return kernel([](Block x, BlockOut y) {
             y.store(x.load() * 2.0f + 1.0f);
             debug_print("{}", y.at(0).load());
           })
        .compile(Mesh{{"x", 1}}, {}, rt);
  };
  const auto affine_of = [](const Array& y, int c) { return is_affine_of(y, c); };
  const RuntimeOptions dflt = with_workers(2);
  EXPECT_EQ(inlined(dflt, plain, affine_of), 3);
  EXPECT_EQ(inlined(dflt, two_devices, affine_of), 0);
  EXPECT_EQ(inlined(dflt, looping, affine_of), 0);
  EXPECT_EQ(inlined(dflt, copying, affine_of), 0);
  EXPECT_EQ(inlined(dflt, printing, affine_of), 0);
  RuntimeOptions o = dflt;
  o.inline_launch_bytes = kBlock * sizeof(float) - 1;  // the block is one byte too large
  EXPECT_EQ(inlined(o, plain, affine_of), 0);
  o.inline_launch_bytes = kBlock * sizeof(float);
  EXPECT_EQ(inlined(o, plain, affine_of), 3);
  for (auto checked : {&RuntimeOptions::detect_races, &RuntimeOptions::lazy_copies, &RuntimeOptions::record_timeline}) {
    o = dflt;
    o.*checked = true;
    EXPECT_EQ(inlined(o, plain, affine_of), 0);
  }
  // A dot of 8 x 8 x 8 = 512 multiply-adds: inline up to that many.
  const auto dotting = [](Runtime& rt) {
    return kernel([](VmemRef<const float, 8, 8> x, VmemRef<float, 8, 8> y) { y.store(dot(x.load(), x.load())); })
        .compile(Mesh{{"x", 1}}, {}, rt);
  };
  const auto squared = [](const Array& y, int c) {
    const std::vector<float> got = y.to_host<float>(0);
    for (std::int64_t r = 0; r < 8; ++r)
      for (std::int64_t k = 0; k < 8; ++k) {
        float want = 0;
        for (std::int64_t j = 0; j < 8; ++j)
          want += (tag(0, r * 8 + j) + static_cast<float>(c)) * (tag(0, j * 8 + k) + static_cast<float>(c));
        if (got[static_cast<std::size_t>(r * 8 + k)] != want) return false;
      }
    return true;
  };
  o = dflt;
  o.inline_launch_macs = 512;
  EXPECT_EQ(inlined(o, dotting, squared, Shape{8, 8}), 3);
  o.inline_launch_macs = 511;
  EXPECT_EQ(inlined(o, dotting, squared, Shape{8, 8}), 0);
}

// A call made while a launch through the queue runs takes the queue behind
// it, whether or not it reads what that launch writes; once the runtime is
// idle again, calls run inline.
TEST(InlineLaunch, WaitsItsTurnBehindAQueuedLaunch) {
  Watchdog dog(kTestLimit, "inline behind the queue");
  Runtime rt(with_workers(2));
  std::atomic<bool> open{false};
  const Executable gated = kernel([&open](Block x, BlockOut y) {
                             io_callback([&open] {
                               const auto until = std::chrono::steady_clock::now() + kTestLimit;
                               while (!open.load() && std::chrono::steady_clock::now() < until)
                                 std::this_thread::yield();
                             });
                             y.store(x.load() + 1.0f);
                           })
                               .name("gated")
                               .compile(Mesh{{"x", 1}}, {}, rt);
  const Executable exe = affine(rt);
  auto first = gated(ramp(rt));
  auto reads_first = exe(first[0]);
  auto independent = exe(ramp(rt, 7));
  EXPECT_FALSE(reads_first[0].is_ready());
  EXPECT_FALSE(independent[0].is_ready()) << "ran inline while the gated launch held the runtime";
  open = true;
  EXPECT_TRUE(all_shards_match<float>(reads_first[0], [](int d, std::int64_t i) { return (tag(d, i) + 1.0f) * 2.0f + 1.0f; }));
  EXPECT_TRUE(is_affine_of(independent[0], 7));
  EXPECT_EQ(rt.totals().inlined, 0);
  rt.drain();
  auto later = exe(ramp(rt, 3));
  EXPECT_TRUE(later[0].is_ready());
  EXPECT_TRUE(is_affine_of(later[0], 3));
  EXPECT_EQ(rt.totals().inlined, 1);
}

TEST(InlineLaunch, AFailureComesBackThroughTheOutputsAndTheNextCallWorks) {
  Watchdog dog(kTestLimit, "inline failure");
  Runtime rt(with_workers(2));
  int line = 0;
  const Executable exe = kernel([&line](VmemRef<const float, 16> x, VmemRef<const std::int32_t, 1> off,
                                        VmemRef<float, 4> y) {
                           line = __LINE__ + 1;
                           y.store(x.at(ds(off.at(0).load(), 4)).load());
                         })
                             .name("slice")
                             .compile(Mesh{{"x", 1}}, {}, rt);
  const Array x = Array::generate<float>(1, Shape{16}, [](int, std::int64_t i) { return static_cast<float>(i); }, rt);
  const auto offset = [&](std::int32_t v) {
    return Array::generate<std::int32_t>(1, Shape{1}, [v](int, std::int64_t) { return v; }, rt);
  };
  auto bad = exe(x, offset(100));
  EXPECT_TRUE(bad[0].is_ready());
  const std::string msg = runtime_error_of([&] { bad[0].block_until_ready(); });
  EXPECT_NE(msg.find("refx: device 0:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("index 100 (covering 100..103) is out of bounds for dimension 0 of size 16"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find(here(__FILE__, line)), std::string::npos) << msg;
  for (std::int32_t at : {0, 5, 12}) {
    auto y = exe(x, offset(at));
    EXPECT_EQ(y[0].to_host<float>(0), (std::vector<float>{float(at), float(at + 1), float(at + 2), float(at + 3)}));
  }
  EXPECT_EQ(rt.totals().inlined, 4);
  EXPECT_EQ(rt.totals().contexts_built, 2) << "the failed call's state is not reused";
}

// Host threads calling at once: one runs inline at a time, the others take
// the queue; every result is right (and, under ThreadSanitizer, race-free).
TEST(InlineLaunch, ConcurrentCallersFromSeveralThreads) {
  Watchdog dog(kTestLimit, "inline, several threads");
  Runtime rt(with_workers(2));
  const Executable exe = affine(rt);
  constexpr int threads = 4, calls = 50;
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < threads; ++t)
    callers.emplace_back([&, t] {
      for (int c = 0; c < calls; ++c) {
        const int k = t * calls + c;
        auto y = exe(exe(ramp(rt, k))[0]);
        const std::vector<float> h = y[0].to_host<float>(0);
        for (std::int64_t i = 0; i < kBlock; ++i)
          if (h[static_cast<std::size_t>(i)] != ((tag(0, i) + static_cast<float>(k)) * 2.0f + 1.0f) * 2.0f + 1.0f)
            ++wrong;
      }
    });
  for (auto& th : callers) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(rt.launches(), 2 * threads * calls);
  EXPECT_GT(rt.totals().inlined, 0);
}

}  // namespace
