// The deterministic order of host effects (docs/effects.md): ordered effects
// of one program in (sequence, device) order, all of program k's before
// program k+1's, fori_loop iterations in order, and unordered effects exactly
// once each (checked as a multiset).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "effects/effects_testing.hpp"

namespace {

using namespace refx;
using namespace refx::effects_testing;
using namespace std::chrono_literals;

using Tag = VmemRef<const std::int32_t, 1>;

// The sequencing-effects note's scenario: f (slow, device 0) and g (device 1)
// dispatched alternately keep the order f, g, f, g, ... in the log.
TEST(Ordering, SlowFThenGAlternateAcrossTwoDevices) {
  Watchdog dog;
  Runtime rt;
  const Mesh mesh{{"x", 2}};
  Log<std::string> log;
  auto f = kernel([&log](Tag t) {
             when(axis_index("x") == 0, [&] {
               io_callback(ordered, [&log](std::int32_t k) {
                 std::this_thread::sleep_for(3ms);
                 log.add("f" + std::to_string(k));
               }, t.at(0).load());
             });
           })
               .name("f")
               .compile(mesh, {}, rt);
  auto g = kernel([&log](Tag t) {
             when(axis_index("x") == 1, [&] {
               io_callback(ordered, [&log](std::int32_t k) { log.add("g" + std::to_string(k)); }, t.at(0).load());
             });
           })
               .name("g")
               .compile(mesh, {}, rt);
  std::vector<std::string> want;
  for (int k = 0; k < 12; ++k) {
    f(scalar_array(2, k, rt));
    g(scalar_array(2, k, rt));
    want.push_back("f" + std::to_string(k));
    want.push_back("g" + std::to_string(k));
  }
  effects_barrier(rt);
  EXPECT_EQ(log.items(), want);
}

// The same with the callbacks on both devices of both programs: within a
// program, device 0 before device 1 even though device 0 is slower.
TEST(Ordering, SlowDeviceZeroStillGoesFirstWithinAProgram) {
  Watchdog dog;
  Runtime rt;
  Log<std::string> log;
  auto exe = kernel([&log](Tag t) {
               auto me = axis_index("x");
               // Delay device 0 on its own worker (an unordered effect runs inline).
               when(me == 0, [&] { io_callback([] { std::this_thread::sleep_for(2ms); }); });
               io_callback(ordered, [&log](std::int32_t k, std::int32_t d) {
                 log.add(std::to_string(k) + ":" + std::to_string(d));
               }, t.at(0).load(), me);
             })
                 .compile(Mesh{{"x", 2}}, {}, rt);
  std::vector<std::string> want;
  for (int k = 0; k < 8; ++k) {
    exe(scalar_array(2, k, rt));
    want.push_back(std::to_string(k) + ":0");
    want.push_back(std::to_string(k) + ":1");
  }
  effects_barrier(rt);
  EXPECT_EQ(log.items(), want);
}

// Ordered prints in a fori_loop keep iteration order (one device).
TEST(Ordering, ForiLoopPrintsInIterationOrder) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  auto exe = kernel([](Tag t) {
               auto base = t.at(0).load();
               fori_loop(0, 20, [&](Scalar<std::int32_t> i) { debug_print(ordered, "iter {} of {}", i, base); });
             })
                 .compile(Mesh{{"x", 1}}, {}, rt);
  exe(scalar_array(1, 7, rt));
  effects_barrier(rt);
  std::vector<std::string> want;
  for (int i = 0; i < 20; ++i) want.push_back("iter " + std::to_string(i) + " of 7");
  EXPECT_EQ(cap.lines(), want);
}

// A fori_loop on several devices: iteration i's prints (sequence i) of every
// device, in device order, before iteration i+1's; a loop carry flows in.
TEST(Ordering, ForiLoopOnFourDevicesInSequenceThenDeviceOrder) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  auto exe = kernel([](Tag) {
               auto me = axis_index("x");
               auto total = fori_loop(0, 5, [&](Scalar<std::int32_t> i, Scalar<std::int32_t> acc) {
                 debug_print(ordered, "i={} d={} acc={}", i, me, acc);
                 return acc + i;
               }, Scalar<std::int32_t>(0));
               debug_print(ordered, "end d={} total={}", me, total);
             })
                 .compile(Mesh{{"x", 4}}, {}, rt);
  exe(scalar_array(4, 0, rt));
  effects_barrier(rt);
  std::vector<std::string> want;
  for (int i = 0, acc = 0; i < 5; acc += i, ++i)
    for (int d = 0; d < 4; ++d) want.push_back(fmt::format("i={} d={} acc={}", i, d, acc));
  for (int d = 0; d < 4; ++d) want.push_back(fmt::format("end d={} total=10", d));
  EXPECT_EQ(cap.lines(), want);
}

// Devices with different numbers of ordered effects (device d prints d+1
// times): slot (s, d) exists only where device d reached s; the order is by
// sequence, then device, skipping the missing slots.
TEST(Ordering, UnevenCountsAreOrderedBySequenceThenDevice) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  auto exe = kernel([](Tag) {
               auto me = axis_index("x");
               fori_loop(0, me + 1, [&](Scalar<std::int32_t> s) { debug_print(ordered, "s{} d{}", s, me); });
             })
                 .compile(Mesh{{"x", 4}}, {}, rt);
  for (int rep = 0; rep < 5; ++rep) exe(scalar_array(4, 0, rt));
  effects_barrier(rt);
  std::vector<std::string> one;
  for (int s = 0; s < 4; ++s)
    for (int d = s; d < 4; ++d) one.push_back(fmt::format("s{} d{}", s, d));
  std::vector<std::string> want;
  for (int rep = 0; rep < 5; ++rep) want.insert(want.end(), one.begin(), one.end());
  EXPECT_EQ(cap.lines(), want);
}

// Ordered prints on several devices, with device 0 made slow: the output is
// in (sequence, device) order, program after program.
TEST(Ordering, MultiDevicePrintsInSequenceDeviceOrder) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  constexpr int n = 4;
  auto exe = kernel([](Tag t) {
               auto me = axis_index("x");
               auto k = t.at(0).load();
               when(me == 0, [&] { io_callback([] { std::this_thread::sleep_for(1ms); }); });
               debug_print(ordered, "p{} s0 d{}", k, me);
               debug_print(ordered, "p{} s1 d{}", k, me);
               when(me == n - 1, [&] { debug_print(ordered, "p{} s2 d{}", k, me); });
             })
                 .compile(Mesh{{"x", n}}, {}, rt);
  std::vector<std::string> want;
  for (int k = 0; k < 6; ++k) {
    exe(scalar_array(n, k, rt));
    for (int s = 0; s < 2; ++s)
      for (int d = 0; d < n; ++d) want.push_back(fmt::format("p{} s{} d{}", k, s, d));
    want.push_back(fmt::format("p{} s2 d{}", k, n - 1));
  }
  effects_barrier(rt);
  EXPECT_EQ(cap.lines(), want);
}

// The same order whatever order the workers pick tasks in (checked mode:
// shuffled task queue), with device 2 delayed and a semaphore handshake that
// makes devices park and resume between their effects.
class OrderingShuffled : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(OrderingShuffled, SequenceDeviceOrderUnderRandomScheduling) {
  Watchdog dog;
  RuntimeOptions o;
  o.shuffle_seed = GetParam();
  o.workers = 3;
  Runtime rt(o);
  PrintCapture cap(rt);
  Log<std::string> calls;
  constexpr int n = 4;
  auto exe = kernel([&calls](Tag t) {
               auto me = axis_index("x");
               auto k = t.at(0).load();
               when(me == 2, [&] { io_callback([] { std::this_thread::sleep_for(std::chrono::microseconds(300)); }); });
               debug_print(ordered, "p{} a d{}", k, me);
               run_scoped([&](RegularSemaphore token) {
                 // A ring handshake: each device parks until its left neighbour signals.
                 semaphore_signal(token, 1, (me + 1) % axis_size("x"));
                 semaphore_wait(token, 1);
               });
               io_callback(ordered, [&calls](std::int32_t kk, std::int32_t d) {
                 calls.add(fmt::format("p{} d{}", kk, d));
               }, k, me);
               debug_print(ordered, "p{} b d{}", k, me);
             })
                 .compile(Mesh{{"x", n}}, {}, rt);
  std::vector<std::string> want_prints, want_calls;
  for (int k = 0; k < 10; ++k) {
    exe(scalar_array(n, k, rt));
    for (const char* phase : {"a", "b"})
      for (int d = 0; d < n; ++d) want_prints.push_back(fmt::format("p{} {} d{}", k, phase, d));
    for (int d = 0; d < n; ++d) want_calls.push_back(fmt::format("p{} d{}", k, d));
  }
  effects_barrier(rt);
  EXPECT_EQ(cap.lines(), want_prints);
  EXPECT_EQ(calls.items(), want_calls);
}
INSTANTIATE_TEST_SUITE_P(Seeds, OrderingShuffled, ::testing::Values(0u, 1u, 7u, 42u, 1234u));

// Unordered prints: each happens exactly once; the order is not promised.
TEST(Ordering, UnorderedPrintsFormAMultiset) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  auto exe = kernel([](Tag t) {
               auto me = axis_index("x");
               auto k = t.at(0).load();
               fori_loop(0, 3, [&](Scalar<std::int32_t> i) { debug_print("p{} d{} i{}", k, me, i); });
               debug_print("p{} d{} done", k, me);
             })
                 .compile(Mesh{{"x", 4}}, {}, rt);
  std::vector<std::string> want;
  for (int k = 0; k < 5; ++k) {
    exe(scalar_array(4, k, rt));
    for (int d = 0; d < 4; ++d) {
      for (int i = 0; i < 3; ++i) want.push_back(fmt::format("p{} d{} i{}", k, d, i));
      want.push_back(fmt::format("p{} d{} done", k, d));
    }
  }
  effects_barrier(rt);
  auto got = cap.lines();
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

// Ordered and unordered prints mixed: each appears once; the ordered ones
// keep their order among themselves.
TEST(Ordering, MixedOrderedAndUnorderedEachAppearOnce) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  auto exe = kernel([](Tag) {
               auto me = axis_index("x");
               debug_print(ordered, "O1 d{}", me);
               debug_print("U d{}", me);
               debug_print(ordered, "O2 d{}", me);
             })
                 .compile(Mesh{{"x", 2}}, {}, rt);
  exe(scalar_array(2, 0, rt));
  effects_barrier(rt);
  std::vector<std::string> ordered_lines, unordered_lines;
  for (const auto& l : cap.lines()) (l[0] == 'O' ? ordered_lines : unordered_lines).push_back(l);
  EXPECT_EQ(ordered_lines, (std::vector<std::string>{"O1 d0", "O1 d1", "O2 d0", "O2 d1"}));
  std::sort(unordered_lines.begin(), unordered_lines.end());
  EXPECT_EQ(unordered_lines, (std::vector<std::string>{"U d0", "U d1"}));
}

// Ordered prints and ordered callbacks are different kinds (separate
// chains), and each kind keeps its own order.
TEST(Ordering, EachKindKeepsItsOwnOrder) {
  Watchdog dog;
  Runtime rt;
  PrintCapture cap(rt);
  Log<int> calls;
  auto exe = kernel([&calls](Tag t) {
               auto me = axis_index("x");
               auto k = t.at(0).load();
               debug_print(ordered, "{} {}", k, me);
               io_callback(ordered, [&calls](std::int32_t kk, std::int32_t d) { calls.add(kk * 10 + d); }, k, me);
             })
                 .compile(Mesh{{"x", 3}}, {}, rt);
  std::vector<std::string> want_prints;
  std::vector<int> want_calls;
  for (int k = 0; k < 10; ++k) {
    exe(scalar_array(3, k, rt));
    for (int d = 0; d < 3; ++d) {
      want_prints.push_back(fmt::format("{} {}", k, d));
      want_calls.push_back(k * 10 + d);
    }
  }
  effects_barrier(rt);
  EXPECT_EQ(cap.lines(), want_prints);
  EXPECT_EQ(calls.items(), want_calls);
}

// 10,000 back-to-back dispatches of a trivial kernel with an ordered effect
// on a two-device mesh: the log is in dispatch order, then device order.
TEST(Ordering, TenThousandBackToBackDispatchesKeepOrder) {
  Watchdog dog(std::chrono::milliseconds(60000));
  Runtime rt;
  constexpr int kCalls = 10000;
  std::vector<std::int64_t> log;  // ordered callbacks never run concurrently
  log.reserve(2 * kCalls);
  auto exe = kernel([&log](Tag t) {
               io_callback(ordered, [&log](std::int32_t k, std::int32_t d) { log.push_back(2 * std::int64_t{k} + d); },
                           t.at(0).load(), axis_index("x"));
             })
                 .compile(Mesh{{"x", 2}}, {}, rt);
  std::vector<Array> inputs;
  inputs.reserve(kCalls);
  for (int k = 0; k < kCalls; ++k) inputs.push_back(scalar_array(2, k, rt));
  for (int k = 0; k < kCalls; ++k) exe(inputs[static_cast<std::size_t>(k)]);
  effects_barrier(rt);
  ASSERT_EQ(log.size(), static_cast<std::size_t>(2 * kCalls));
  for (std::size_t i = 0; i < log.size(); ++i)
    if (log[i] != static_cast<std::int64_t>(i)) FAIL() << "entry " << i << " is " << log[i];
}

// Blocks print as (nested) lists through the runtime too, and an ordered
// callback gets copies: later changes to the values do not reach it.
TEST(Ordering, OrderedCallbackSeesTheValuesOfItsProgramPoint) {
  Watchdog dog;
  Runtime rt;
  Log<std::vector<std::int32_t>> seen;
  auto exe = kernel([&seen](Tag) {
               auto me = axis_index("x");
               fori_loop(0, 3, [&](Scalar<std::int32_t> i) {
                 auto block = broadcast(i * 10 + me, TypedShape<extents<3>>{Shape{3}});
                 io_callback(ordered, [&seen](std::span<const std::int32_t> v) { seen.add({v.begin(), v.end()}); },
                             block);
               });
             })
                 .compile(Mesh{{"x", 2}}, {}, rt);
  exe(scalar_array(2, 0, rt));
  effects_barrier(rt);
  std::vector<std::vector<std::int32_t>> want;
  for (int i = 0; i < 3; ++i)
    for (int d = 0; d < 2; ++d) want.push_back(std::vector<std::int32_t>(3, i * 10 + d));
  EXPECT_EQ(seen.items(), want);
}

}  // namespace
