// refx::explore and refx::replay (docs/runtime.md, "Controlled schedules"):
// kernels whose bug only some schedules show -- a copy into a neighbour that
// has not entered, a deadlock that depends on when a signal arrives, a slot
// reused while a late copy still reads it -- are found by PCT and by
// exhaustive search, minimised, and replayed to the identical event order;
// correct kernels pass every order, and exhaustive search says when it has
// covered them all. Bad options and tokens are refused with what is wrong.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <refx/collectives.hpp>
#include <refx/explore.hpp>
#include <refx/refx.hpp>

#include "explore/explore_kernels.hpp"
#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;
using namespace refx::testing::explore_kernels;

ExploreOptions pct(std::int64_t runs = 1000) {
  return {.strategy = ExploreStrategy::pct, .runs = runs, .progress = false};
}
ExploreOptions exhaustive(std::int64_t runs = 100000) {
  return {.strategy = ExploreStrategy::exhaustive, .runs = runs, .progress = false};
}

TEST(Explore, TheThreadedRuntimeRunsTheBuggyKernelsWithoutComplaint) {
  Watchdog dog(kTestLimit, "buggy kernels, threaded");
  auto out = shift(4, false)(tagged(4));
  for (int d = 0; d < 4; ++d) EXPECT_EQ(out[0].to_host<float>(d)[1], tag(mod(d - 1, 4), 1));
}

TEST(Explore, ACopyIntoANeighbourThatHasNotEnteredIsFound) {
  Watchdog dog(kTestLimit, "missing barrier");
  Array x = tagged(4), y = zeros(4);
  const ExploreReport r = explore(shift(4, false), {x, y}, pct());
  ASSERT_FALSE(r.ok()) << r;
  EXPECT_EQ(r.failure->kind, ScheduleFailure::Kind::not_entered) << r;
  EXPECT_NE(r.failure->message.find("before it has entered the kernel"), std::string::npos) << r;
  EXPECT_NE(r.failure->message.find(here(kKernelsFile, g_copy_line)), std::string::npos) << r;
  EXPECT_EQ(r.failure->minimal_choices, 0) << r;  // devices entering one by one show it at once

  const ExploreReport fixed = explore(shift(4, true), {x, y}, pct(300));
  EXPECT_TRUE(fixed.ok()) << fixed;
  EXPECT_EQ(fixed.runs, 300);
  EXPECT_GT(fixed.distinct, 10) << fixed;
  for (int d = 0; d < 4; ++d) EXPECT_EQ(y.to_host<float>(d)[3], tag(mod(d - 1, 4), 3));
}

TEST(Explore, DevicesEnterTogetherWithoutACollectiveId) {
  Watchdog dog(kTestLimit, "entry together");
  // refx's own collectives rely on Pallas' device barrier at the start of a
  // kernel without a collective id: every order of a ring all-gather passes.
  auto exe = ring_gather<3>();
  Array x = tagged(3), y = zeros(3, Shape{3, kN});
  const ExploreReport r = explore(exe, {x, y}, exhaustive());
  EXPECT_TRUE(r.ok()) << r;
  EXPECT_TRUE(r.finished) << r;
  EXPECT_GT(r.distinct, 1) << r;
  EXPECT_EQ(y.to_host<float>(2)[kN + 5], tag(1, 5));
  // Apart, the same kernel's first copy lands in a device still elsewhere.
  const ExploreReport apart = explore(exe, {x, y}, {.entry = DeviceEntry::apart, .progress = false});
  ASSERT_FALSE(apart.ok()) << apart;
  EXPECT_EQ(apart.failure->kind, ScheduleFailure::Kind::not_entered);
}

TEST(Explore, AnOrderDependentDeadlockIsFoundByPctAndByExhaustiveSearch) {
  Watchdog dog(kTestLimit, "order-dependent deadlock");
  Array x = tagged(3), y = zeros(3);
  auto exe = fast_path();
  for (const ExploreOptions& o : {pct(), exhaustive()}) {
    const ExploreReport r = explore(exe, {x, y}, o);
    ASSERT_FALSE(r.ok()) << r;
    EXPECT_EQ(r.failure->kind, ScheduleFailure::Kind::deadlock) << r;
    EXPECT_GT(r.failure->run, 0) << "the default schedule passes: " << r;
    EXPECT_NE(r.failure->message.find("device 2: semaphore_wait"), std::string::npos) << r;
    EXPECT_EQ(r.failure->minimal_choices, 1) << r;  // device 1 runs first
  }
  // The Arrays hold the default schedule's results.
  EXPECT_EQ(y.to_host<float>(1)[7], tag(1, 7));
}

TEST(Explore, ASlotReusedUnderALateCopyIsARaceAndChangesTheOutput) {
  Watchdog dog(kTestLimit, "slot reuse");
  const Shape s{kSteps, kN};
  Array x = tagged(2, s), y = zeros(2, s);
  auto exe = slots();
  const ExploreReport raced = explore(exe, {x, y}, pct());
  ASSERT_FALSE(raced.ok()) << raced;
  EXPECT_EQ(raced.failure->kind, ScheduleFailure::Kind::race) << raced;
  EXPECT_GT(raced.failure->run, 0) << raced;

  ExploreOptions o = exhaustive();
  o.detect_races = false;
  const ExploreReport differs = explore(exe, {x, y}, o);
  ASSERT_FALSE(differs.ok()) << differs;
  EXPECT_EQ(differs.failure->kind, ScheduleFailure::Kind::output) << differs;
  EXPECT_NE(differs.failure->message.find("parameter 1 on device 1, element [0, 0]"), std::string::npos) << differs;
  EXPECT_NE(differs.failure->message.find(fmt::format("is {} under the default schedule and {}", tag(0, 0),
                                                      tag(0, 2 * kN))),
            std::string::npos)
      << differs;
}

TEST(Explore, ReplayRunsTheIdenticalSchedule) {
  Watchdog dog(kTestLimit, "replay");
  Array x = tagged(3), y = zeros(3);
  auto exe = fast_path();
  const std::string path = ::testing::TempDir() + "explore_replay.json";
  ExploreOptions o = pct();
  o.timeline = path;
  const ExploreReport r = explore(exe, {x, y}, o);
  ASSERT_FALSE(r.ok()) << r;
  const ReplayResult a = replay(exe, {x, y}, r.failure->minimal_token);
  const ReplayResult b = replay(exe, {x, y}, r.failure->minimal_token);
  ASSERT_TRUE(a.failure.has_value());
  EXPECT_EQ(a.failure->kind, ScheduleFailure::Kind::deadlock);
  EXPECT_EQ(a.failure->message, r.failure->message);
  EXPECT_EQ(a.timeline_json, b.timeline_json);
  EXPECT_EQ(a.schedule, r.failure->schedule);
  std::ifstream f(path);
  std::stringstream written;
  written << f.rdbuf();
  EXPECT_EQ(written.str(), a.timeline_json);
  // The full token fails the same way.
  const ReplayResult full = replay(exe, {x, y}, r.failure->token);
  ASSERT_TRUE(full.failure.has_value());
  EXPECT_EQ(full.failure->kind, ScheduleFailure::Kind::deadlock);

  // REFX_REPLAY reruns it inside explore().
  ::setenv("REFX_REPLAY", r.failure->minimal_token.c_str(), 1);
  const ExploreReport env = explore(exe, {x, y}, pct());
  ::unsetenv("REFX_REPLAY");
  EXPECT_TRUE(env.replayed);
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.failure->message, r.failure->message);
}

TEST(Explore, BadTokensAndOptionsAreRefused) {
  Watchdog dog(kTestLimit, "bad input");
  Array x = tagged(3), y = zeros(3);
  auto exe = fast_path();
  const ExploreReport r = explore(exe, {x, y}, pct());
  ASSERT_FALSE(r.ok());
  const std::string token = r.failure->minimal_token;
  const auto error = [&](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error([&] { replay(exe, {x, y}, "garbage"); }).find("is not a replay token"), std::string::npos);
  EXPECT_NE(error([&] { replay(exe, {x, y}, "rs0" + token.substr(3)); }).find("version 'rs0'"), std::string::npos);
  EXPECT_NE(error([&] { replay(shift(3, true), {tagged(3), zeros(3)}, token); }).find("for kernel 'fast_path', not"),
            std::string::npos);
  auto other = kernel([](In x, Out y) { y.store(x.load() + 1.0f); }).name("fast_path").compile(Mesh{{"x", 3}});
  EXPECT_NE(error([&] { replay(other, {x, y}, token); }).find("is not the one the replay token was made for"),
            std::string::npos);
  auto four = kernel([](In x, Out y) { y.store(x.load()); }).name("fast_path").compile(Mesh{{"x", 4}});
  EXPECT_NE(error([&] { replay(four, {tagged(4), zeros(4)}, token); }).find("for a mesh of 3 lanes"),
            std::string::npos);
  std::string far = token.substr(0, token.rfind('-') + 1) + "z3.9";
  EXPECT_NE(error([&] { replay(exe, {x, y}, far); }).find("chooses point 9 of the"), std::string::npos);

  EXPECT_NE(error([&] { explore(exe, {x, y}, {.runs = 0}); }).find("runs = 0"), std::string::npos);
  EXPECT_NE(error([&] { explore(exe, {x, y}, {.runs = -3}); }).find("runs = -3"), std::string::npos);
  EXPECT_NE(error([&] { explore(exe, {x, y}, {.budget_seconds = 0.0}); }).find("budget_seconds = 0"),
            std::string::npos);
  EXPECT_NE(error([&] { explore(exe, {x, y}, {.depth = 0}); }).find("depth = 0"), std::string::npos);
  EXPECT_NE(error([&] { explore(exe, {x, y}, {.calls = 0}); }).find("calls = 0"), std::string::npos);
  std::string one_call = token;
  one_call.insert(one_call.find("3Ltr") + 4, "x1");
  EXPECT_NE(error([&] { replay(exe, {x, y}, one_call); }).find("a call count of 1"), std::string::npos);
  EXPECT_NE(error([&] { explore(exe, {x}); }).find("has 2 parameters, got 1 Arrays"), std::string::npos);
}

TEST(Explore, WhatOneCallLeavesForTheNextIsFound) {
  Watchdog dog(kTestLimit, "calls");
  // A signal nobody waits for: the next call would start from its count.
  Array x = tagged(3), y = zeros(3);
  const ExploreReport once = explore(unwaited_signal(), {x, y}, pct(50));
  ASSERT_FALSE(once.ok()) << once;
  EXPECT_TRUE(once.failure->kind == ScheduleFailure::Kind::unbalanced ||
              once.failure->kind == ScheduleFailure::Kind::left)
      << once;
  ExploreOptions twice = pct(50);
  twice.calls = 2;
  const ExploreReport r = explore(unwaited_signal(), {x, y}, twice);
  ASSERT_FALSE(r.ok()) << r;
  EXPECT_EQ(r.failure->kind, ScheduleFailure::Kind::carried) << r;
  EXPECT_NE(r.failure->message.find("which the next call would start from"), std::string::npos) << r;
  EXPECT_NE(r.failure->minimal_token.find("3Ltrx2-"), std::string::npos) << r.failure->minimal_token;

  // A signal consumed only when it has already come: when it is late, it
  // lands in the neighbour's next call (with one call: after it left).
  Array lx = tagged(2), ly = zeros(2);
  const ExploreReport left = explore(late_signal(), {lx, ly}, pct(200));
  ASSERT_FALSE(left.ok()) << left;
  EXPECT_EQ(left.failure->kind, ScheduleFailure::Kind::left) << left;
  // With two calls, PCT finds it late in the first call (carried into the
  // second) or in the last (after the kernel); some seed shows the first.
  std::optional<ScheduleFailure> carried;
  for (std::uint64_t seed = 1; seed <= 50 && !carried; ++seed) {
    ExploreOptions o = pct(200);
    o.calls = 2;
    o.seed = seed;
    const ExploreReport late = explore(late_signal(), {lx, ly}, o);
    ASSERT_FALSE(late.ok()) << late;
    EXPECT_GT(late.failure->run, 0) << "the default schedule passes: " << late;
    ASSERT_TRUE(late.failure->kind == ScheduleFailure::Kind::carried || late.failure->kind == ScheduleFailure::Kind::left)
        << late;
    if (late.failure->kind == ScheduleFailure::Kind::carried) carried = late.failure;
  }
  ASSERT_TRUE(carried.has_value()) << "50 seeds of PCT found the late signal only in the last call";
  EXPECT_NE(carried->message.find("in call 1 to"), std::string::npos) << carried->message;
  EXPECT_NE(carried->message.find("carried from one call into the next (wait for every copy and signal"),
            std::string::npos)
      << carried->message;
  const ReplayResult again = replay(late_signal(), {lx, ly}, carried->minimal_token);
  ASSERT_TRUE(again.failure.has_value());
  EXPECT_EQ(again.failure->message, carried->message);
  EXPECT_NE(again.schedule.back().find("in call 1 reaches"), std::string::npos) << again.schedule.back();

  // With the barrier, every call of every schedule is right; so is refx's
  // ring all-gather, with Pallas' device barrier before each call.
  Array sx = tagged(3), sy = zeros(3);
  ExploreOptions three = pct(300);
  three.calls = 3;
  const ExploreReport fixed = explore(shift(3, true), {sx, sy}, three);
  EXPECT_TRUE(fixed.ok()) << fixed;
  for (int d = 0; d < 3; ++d) EXPECT_EQ(sy.to_host<float>(d)[3], tag(mod(d - 1, 3), 3));
  Array gx = tagged(3), gy = zeros(3, Shape{3, kN});
  ExploreOptions together = pct(300);
  together.calls = 2;
  const ExploreReport ring = explore(ring_gather<3>(), {gx, gy}, together);
  EXPECT_TRUE(ring.ok()) << ring;
  EXPECT_GT(ring.distinct, 1) << ring;
}

TEST(Explore, WhatFindsNothingSaysWhatItCovered) {
  Watchdog dog(kTestLimit, "coverage");
  Array x = tagged(3), y = zeros(3);
  auto exe = kernel([](In x, Out y) { y.store(x.load()); }).compile(Mesh{{"x", 3}});
  const ExploreReport r = explore(exe, {x, y}, exhaustive());
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.distinct, 1);  // three devices that never meet: one order
  EXPECT_NE(r.to_string().find("every distinguishable order ran, none failed"), std::string::npos) << r;
  const ExploreReport capped = explore(shift(4, true), {tagged(4), zeros(4)}, exhaustive(5));
  EXPECT_FALSE(capped.finished);
  EXPECT_EQ(capped.runs, 5);
  EXPECT_NE(capped.to_string().find("stopped before every order ran"), std::string::npos) << capped;
}

}  // namespace
