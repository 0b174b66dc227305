// Runtime tokens (per thread, per ordered effect kind), output tokens (per
// device), effects_barrier (waits, clears; also at thread exit), async
// dispatch of effectful programs, and Executable::effects().

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>
#include <refx/runtime/effects.hpp>

#include "effects/effects_testing.hpp"

namespace {

using namespace refx;
using namespace refx::effects_testing;
using namespace std::chrono_literals;

using Tag = VmemRef<const std::int32_t, 1>;

TEST(Tokens, ReplacedByEachProgramOfTheirKindOnly) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  auto prints = kernel([](Tag) { debug_print(ordered, "p"); }).compile(Mesh{{"x", 2}}, {}, rt);
  auto calls = kernel([](Tag) { io_callback(ordered, [] {}); }).compile(Mesh{{"x", 2}}, {}, rt);
  auto pure = kernel([](Tag x, VmemRef<std::int32_t, 1> y) { y.store(x.load()); }).compile(Mesh{{"x", 2}}, {}, rt);
  const Array x = scalar_array(2, 1, rt);

  EXPECT_FALSE(runtime_token(OrderedEffect::debug_print, rt).valid());
  EXPECT_FALSE(runtime_token(OrderedEffect::io_callback, rt).valid());

  prints(x);
  const RuntimeToken p1 = runtime_token(OrderedEffect::debug_print, rt);
  EXPECT_TRUE(p1.valid());
  EXPECT_FALSE(runtime_token(OrderedEffect::io_callback, rt).valid());

  calls(x);
  const RuntimeToken c1 = runtime_token(OrderedEffect::io_callback, rt);
  EXPECT_TRUE(c1.valid());
  EXPECT_EQ(runtime_token(OrderedEffect::debug_print, rt), p1) << "a program without ordered prints moved that token";
  EXPECT_GT(c1.launch(), p1.launch());

  prints(x);
  const RuntimeToken p2 = runtime_token(OrderedEffect::debug_print, rt);
  EXPECT_NE(p2, p1) << "each run produces a fresh token";
  EXPECT_EQ(runtime_token(OrderedEffect::io_callback, rt), c1);

  pure(x);  // no effects: no token moves
  EXPECT_EQ(runtime_token(OrderedEffect::debug_print, rt), p2);
  EXPECT_EQ(runtime_token(OrderedEffect::io_callback, rt), c1);

  effects_barrier(rt);
  EXPECT_TRUE(p1.ready() && p2.ready() && c1.ready());
  EXPECT_FALSE(runtime_token(OrderedEffect::debug_print, rt).valid()) << "the barrier clears the tokens";
  EXPECT_FALSE(runtime_token(OrderedEffect::io_callback, rt).valid());
  EXPECT_TRUE(output_tokens(rt).empty());
  EXPECT_EQ(cap.lines().size(), 4u);
}

TEST(Tokens, OutputTokensPerDevice) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  auto unordered2 = kernel([](Tag x, VmemRef<std::int32_t, 1> y) {
                      y.store(x.load());
                      debug_print("u");
                    }).compile(Mesh{{"x", 2}}, {}, rt);
  auto unordered4 = kernel([](Tag x, VmemRef<std::int32_t, 1> y) {
                      y.store(x.load());
                      io_callback([] {});
                    }).compile(Mesh{{"x", 4}}, {}, rt);
  auto pure4 = kernel([](Tag x, VmemRef<std::int32_t, 1> y) { y.store(x.load()); }).compile(Mesh{{"x", 4}}, {}, rt);
  EXPECT_TRUE(output_tokens(rt).empty());

  unordered4(scalar_array(4, 0, rt));
  auto four = output_tokens(rt);
  ASSERT_EQ(four.size(), 4u);
  for (const auto& t : four) EXPECT_EQ(t, four[0]);

  unordered2(scalar_array(2, 0, rt));
  auto after = output_tokens(rt);
  ASSERT_EQ(after.size(), 4u);
  EXPECT_NE(after[0], four[0]);
  EXPECT_EQ(after[0], after[1]);
  EXPECT_EQ(after[2], four[2]) << "devices 2 and 3 keep their latest effectful program";
  EXPECT_EQ(after[3], four[3]);
  EXPECT_FALSE(runtime_token(OrderedEffect::debug_print, rt).valid()) << "unordered effects take no runtime token";

  pure4(scalar_array(4, 0, rt));  // a pure program with outputs: no output token
  EXPECT_EQ(output_tokens(rt)[2], four[2]);
  effects_barrier(rt);
  EXPECT_EQ(cap.lines(), (std::vector<std::string>{"u", "u"}));
}

// Calling an effectful program returns at once; the host does not wait for
// the previous program's effects (the token is a runtime dependency).
TEST(Tokens, DispatchDoesNotBlockOnTheToken) {
  Watchdog dog;
  Runtime rt;
  std::atomic<int> done{0};
  auto slow = kernel([&done](Tag) {
                io_callback(ordered, [&done] {
                  std::this_thread::sleep_for(150ms);
                  done.fetch_add(1);
                });
              }).compile(Mesh{{"x", 1}}, {}, rt);
  const Array x = scalar_array(1, 0, rt);
  const auto t0 = std::chrono::steady_clock::now();
  slow(x);
  slow(x);  // depends on the first one's token
  const auto dispatch = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(dispatch, 100ms) << "dispatch waited for the ordered effect";
  EXPECT_LT(done.load(), 2);
  effects_barrier(rt);
  EXPECT_EQ(done.load(), 2);
}

// A kernel whose parameters are all read-only has no outputs: only its
// effects observe it, and effects_barrier waits for them.
TEST(Tokens, EffectsBarrierWaitsForProgramsWithoutOutputs) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  std::atomic<bool> called{false};
  auto exe = kernel([&called](Tag t) {
               io_callback([&called](std::int32_t) {
                 std::this_thread::sleep_for(150ms);
                 called = true;
               }, t.at(0).load());
               debug_print(ordered, "printed {}", t.at(0).load());
             }).compile(Mesh{{"x", 1}}, {}, rt);
  EXPECT_EQ(exe.num_inputs(), 1u);
  std::vector<Array> out = exe(scalar_array(1, 5, rt));
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(called.load()) << "the call waited for the kernel";
  effects_barrier(rt);
  EXPECT_TRUE(called.load());
  EXPECT_EQ(cap.lines(), (std::vector<std::string>{"printed 5"}));
}

// Even without any effect, a program without outputs is waited for (and a
// failure in it is reported, see failure_test).
TEST(Tokens, EffectsBarrierWaitsForPureProgramsWithoutOutputs) {
  Watchdog dog;
  Runtime rt;
  auto exe = kernel([](HbmRef<const float, 1 << 16> x) {
               run_scoped([&](VmemRef<float, 1 << 16> tmp, DmaSemaphore sem) {
                 auto c = make_async_copy(x, tmp, sem);
                 c.start();
                 c.wait();
               });
             }).compile(Mesh{{"x", 2}}, {}, rt);
  EXPECT_EQ(exe.effects().level, SideEffectLevel::dataflow);
  exe(Array::generate<float>(2, Shape{1 << 16}, [](int, std::int64_t i) { return static_cast<float>(i); }, rt));
  const auto outs = output_tokens(rt);
  ASSERT_EQ(outs.size(), 2u);
  effects_barrier(rt);
  EXPECT_TRUE(outs[0].ready());
}

// Two threads: each keeps its own order and its own tokens; neither's
// barrier clears the other's tokens.
TEST(Tokens, TwoThreadsAreIndependent) {
  Watchdog dog;
  Runtime rt;
  Log<std::pair<int, int>> log;
  auto exe = kernel([&log](Tag t) {
               io_callback(ordered, [&log](std::int32_t v) { log.add({v / 1000, v % 1000}); }, t.at(0).load());
             }).compile(Mesh{{"x", 2}}, {}, rt);
  constexpr int kCalls = 200;
  RuntimeToken tok[2];
  std::atomic<int> dispatched{0};
  auto work = [&](int who) {
    std::vector<Array> in;
    for (int k = 0; k < kCalls; ++k) in.push_back(scalar_array(2, who * 1000 + k, rt));
    for (int k = 0; k < kCalls; ++k) exe(in[static_cast<std::size_t>(k)]);
    tok[who] = runtime_token(OrderedEffect::io_callback, rt);
    dispatched.fetch_add(1);
    while (dispatched.load() < 2) std::this_thread::yield();
    effects_barrier(rt);
    EXPECT_FALSE(runtime_token(OrderedEffect::io_callback, rt).valid());
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  ASSERT_TRUE(tok[0].valid() && tok[1].valid());
  EXPECT_NE(tok[0], tok[1]) << "two threads share a runtime token";
  EXPECT_FALSE(runtime_token(OrderedEffect::io_callback, rt).valid()) << "the main thread dispatched nothing";
  std::vector<int> next(2, 0);
  int pending_device[2] = {0, 0};
  for (const auto& [who, k] : log.items()) {
    // Each program logs twice (devices 0 and 1); a thread's programs in order.
    ASSERT_EQ(k, next[static_cast<std::size_t>(who)]) << "thread " << who << " out of order";
    if (++pending_device[who] == 2) {
      pending_device[who] = 0;
      ++next[static_cast<std::size_t>(who)];
    }
  }
  EXPECT_EQ(next[0], kCalls);
  EXPECT_EQ(next[1], kCalls);
}

// The barrier also runs when a thread exits: its effects have happened by
// the time join() returns.
TEST(Tokens, BarrierRunsAtThreadExit) {
  Watchdog dog;
  Runtime rt;
  std::atomic<bool> called{false};
  auto exe = kernel([&called](Tag) {
               io_callback(ordered, [&called] {
                 std::this_thread::sleep_for(100ms);
                 called = true;
               });
             }).compile(Mesh{{"x", 2}}, {}, rt);
  const Array x = scalar_array(2, 0, rt);
  std::thread t([&] { exe(x); });
  t.join();
  EXPECT_TRUE(called.load());
}

// A callback that calls effects_barrier would wait for itself: an error.
TEST(Tokens, BarrierInsideACallbackIsAnError) {
  Watchdog dog;
  Runtime rt;
  std::string message;
  auto exe = kernel([&](Tag) {
               io_callback(ordered, [&] {
                 try {
                   effects_barrier(rt);
                 } catch (const Error& e) {
                   message = e.what();
                 }
               });
             }).compile(Mesh{{"x", 1}}, {}, rt);
  exe(scalar_array(1, 0, rt));
  effects_barrier(rt);
  EXPECT_TRUE(contains(message, "would wait for the program that is calling it")) << message;
}

// A callback may dispatch a program of its own runtime, but waiting for it
// there would wait forever (programs of a runtime run one at a time): every
// way of waiting is an error, and the program still runs once the calling
// one has finished.
TEST(Tokens, WaitingInsideACallbackForAProgramOfItsRuntimeIsAnError) {
  Watchdog dog;
  Runtime rt;
  auto add_one = kernel([](Tag x, VmemRef<std::int32_t, 1> y) { y.store(x.load() + 1); }).compile(Mesh{{"x", 1}}, {}, rt);
  auto prints = kernel([](Tag) { debug_print(ordered, "p"); }).compile(Mesh{{"x", 1}}, {}, rt);
  const Array x = scalar_array(1, 41, rt);
  std::vector<Array> inner;
  std::vector<std::string> messages;
  const auto attempt = [&](auto wait) {
    try {
      wait();
      messages.emplace_back("no error");
    } catch (const Error& e) {
      messages.emplace_back(e.what());
    }
  };
  auto outer = kernel([&](Tag) {
                 io_callback(ordered, [&] {
                   inner = add_one(x);
                   attempt([&] { inner[0].block_until_ready(); });
                   attempt([&] { (void)inner[0].to_host<std::int32_t>(0); });
                   prints(x);
                   attempt([&] { runtime_token(OrderedEffect::debug_print, rt).wait(); });
                   attempt([&] { x.block_until_ready(); });  // finished long ago: fine
                 });
               }).compile(Mesh{{"x", 1}}, {}, rt);
  PrintCapture cap(rt);
  outer(x);
  effects_barrier(rt);
  ASSERT_EQ(messages.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(contains(messages[i], "refx: a debug_print sink or an io_callback waits for a program of the runtime "
                                      "that is running it"))
        << i << ": " << messages[i];
  EXPECT_EQ(messages[3], "no error");
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0].to_host<std::int32_t>(0)[0], 42);
}

// Waiting inside a callback for a program of another runtime is fine.
TEST(Tokens, ACallbackMayWaitForAnotherRuntime) {
  Watchdog dog;
  Runtime rt, other;
  auto add_one =
      kernel([](Tag x, VmemRef<std::int32_t, 1> y) { y.store(x.load() + 1); }).compile(Mesh{{"x", 2}}, {}, other);
  const Array x = scalar_array(2, 41, other);
  std::atomic<std::int32_t> seen{0};
  auto outer = kernel([&](Tag) {
                 io_callback(ordered, [&] { seen = add_one(x)[0].to_host<std::int32_t>(1)[0]; });
               }).compile(Mesh{{"x", 2}}, {}, rt);
  outer(scalar_array(2, 0, rt));
  effects_barrier(rt);
  EXPECT_EQ(seen.load(), 42);
}

TEST(Introspection, EffectsOfExecutables) {
  Runtime rt;
  const Mesh mesh{{"x", 2}};
  auto pure = kernel([](Tag x, VmemRef<std::int32_t, 1> y) { y.store(x.load() + 1); }).compile(mesh, {}, rt);
  const EffectInfo& p = pure.effects();
  EXPECT_EQ(p.level, SideEffectLevel::pure);
  EXPECT_TRUE(p.ordered.empty());
  EXPECT_FALSE(p.unordered);
  EXPECT_FALSE(p.host_callbacks);
  EXPECT_EQ(p.dispatch, DispatchMode::async);

  auto comm = kernel([](HbmRef<const float, 8> x, HbmRef<float, 8> y) {
                run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                  auto right = (axis_index("x") + 1) % axis_size("x");
                  auto left = (axis_index("x") + 1) % axis_size("x");
                  semaphore_signal(ready, 1, left);
                  semaphore_wait(ready, 1);
                  auto c = make_async_remote_copy(x, y, send, recv, right);
                  c.start();
                  c.wait();
                });
              }).compile(mesh, {}, rt);
  EXPECT_EQ(comm.effects().level, SideEffectLevel::dataflow);
  EXPECT_EQ(comm.effects().dispatch, DispatchMode::async);

  auto printing = kernel([](Tag x) {
                    debug_print(ordered, "{}", x.at(0).load());
                    fori_loop(0, 3, [&](Scalar<std::int32_t> i) { debug_print("{}", i); });
                  }).compile(mesh, {}, rt);
  const EffectInfo& e = printing.effects();
  EXPECT_EQ(e.level, SideEffectLevel::effectful);
  EXPECT_EQ(e.ordered, std::vector<OrderedEffect>{OrderedEffect::debug_print});
  EXPECT_TRUE(e.unordered);
  EXPECT_FALSE(e.host_callbacks);
  EXPECT_EQ(e.debug_prints, 2);
  EXPECT_EQ(e.dispatch, DispatchMode::async) << "effectful programs dispatch asynchronously too";

  auto calling = kernel([](Tag x) {
                   io_callback(ordered, [](std::int32_t) {}, x.at(0).load());
                   debug_print(ordered, "x");
                 }).compile(mesh, {}, rt);
  const EffectInfo& c = calling.effects();
  EXPECT_EQ(c.ordered, (std::vector<OrderedEffect>{OrderedEffect::debug_print, OrderedEffect::io_callback}));
  EXPECT_FALSE(c.unordered);
  EXPECT_TRUE(c.host_callbacks);
  EXPECT_EQ(c.io_callbacks, 1);
  EXPECT_EQ(c.describe(),
            "effectful (ordered: [debug_print, io_callback], unordered: no, host callbacks: yes, dispatch: async)");
}

}  // namespace
