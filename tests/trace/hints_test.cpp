// delay (pl.delay), touch (pltpu.touch) and trace_value
// (pltpu.trace_value), docs/pallas-to-refx.md: delay keeps the device busy
// on the threaded runtime, adds its time to predict's clock and is a
// scheduling point under refx::explore; touch changes nothing yet counts as a
// write for the race detector and for ordering; trace_value puts a scalar on
// the device's lane of the timeline. A negative delay and a block traced as
// a value are refused on the user's line.

#include <gtest/gtest.h>

#include <chrono>

#include <refx/explore.hpp>
#include <refx/predict.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kN = 256;
using In = VmemRef<const float, kN>;
using Out = VmemRef<float, kN>;
int g_line = 0;

Executable doubled(std::int64_t ns, int devices = 2) {
  return kernel([ns](In x, Out y) {
           if (ns >= 0) delay(ns);
           y.store(x.load() * 2.0f);
         })
      .compile(Mesh{{"x", devices}});
}

TEST(Delay, IsKeptPrintedAndSpendsItsTime) {
  Watchdog dog(kTestLimit, "delay");
  const Executable exe = doubled(30'000'000);  // 30 ms
  EXPECT_NE(to_text(exe.program().graph).find("delay[30000000ns]"), std::string::npos) << to_text(exe.program().graph);
  const Array x = Array::generate<float>(2, Shape{kN}, tag);
  const auto t0 = std::chrono::steady_clock::now();
  const Array y = exe(x)[0];
  y.block_until_ready();
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(30));
  EXPECT_EQ(y.to_host<float>(1)[5], 2.0f * tag(1, 5));
  // A kernel that only delays still runs it (an effect no pass removes).
  auto only = kernel([](In) { delay(1000); }).compile(Mesh{{"x", 1}});
  EXPECT_NE(to_text(only.program().graph).find("delay[1000ns]"), std::string::npos);
}

TEST(Delay, AddsItsTimeToThePrediction) {
  const Array x = Array::generate<float>(2, Shape{kN}, tag), y = Array::generate<float>(2, Shape{kN}, tag);
  const double without = predict(doubled(-1), targets::v5e(), {x, y}).seconds();
  const double with = predict(doubled(1'000'000), targets::v5e(), {x, y}).seconds();
  EXPECT_NEAR(with - without, 1e-3, 1e-9) << without << " s without the delay, " << with << " with";
}

TEST(Delay, IsASchedulingPointUnderExplore) {
  const Array x = Array::generate<float>(2, Shape{kN}, tag), y = Array::generate<float>(2, Shape{kN}, tag);
  const ExploreOptions every{.strategy = ExploreStrategy::exhaustive, .progress = false};
  const ExploreReport without = explore(doubled(-1), {x, y}, every);
  const ExploreReport with = explore(doubled(5000), {x, y}, every);
  ASSERT_TRUE(without.ok() && with.ok()) << without << with;
  EXPECT_EQ(with.max_steps, without.max_steps + 2) << without << with;  // each device stops once more
}

TEST(Delay, ANegativeTimeIsRefusedOnTheUsersLine) {
  const std::string msg = error_of([] {
    (void)kernel([](In x, Out y) {
      g_line = __LINE__; delay(-5);
      y.store(x.load());
    }).compile(Mesh{{"x", 1}});
  });
  EXPECT_NE(msg.find("refx: delay: -5 ns: give a non-negative number of nanoseconds"), std::string::npos) << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

TEST(Touch, ChangesNothingAndOrdersWhatFollows) {
  auto exe = kernel([](In x, Out y) {
               y.store(x.load() + 1.0f);
               touch(y);
               touch(y.at(ds(0, 8)));
             }).compile(Mesh{{"x", 2}});
  const std::string text = to_text(exe.program().graph);
  EXPECT_NE(text.find("touch"), std::string::npos) << text;
  const Array y = exe(Array::generate<float>(2, Shape{kN}, tag))[0];
  for (const std::int64_t i : {std::int64_t{0}, std::int64_t{7}, std::int64_t{8}, kN - 1}) EXPECT_EQ(y.to_host<float>(1)[i], tag(1, i) + 1.0f) << i;
}

TEST(Touch, CountsAsAWriteForTheRaceDetector) {
  if (kThreadSanitizer) GTEST_SKIP() << "plants a race";
  Watchdog dog(kTestLimit, "touch race");
  Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true});
  auto exe = kernel([](HbmRef<const float, kN> x, Out y) {
               run_scoped([&](VmemRef<float, kN> buf, DmaSemaphore sem) {
                 auto c = make_async_copy(x, buf, sem);
                 c.start();
                 g_line = __LINE__; touch(buf);  // before the copy's wait
                 c.wait();
                 y.store(buf.load());
               });
             })
                 .passes(unverified())
                 .compile(Mesh{{"x", 1}}, {}, rt);
  const Array out = exe(Array::generate<float>(1, Shape{kN}, tag, rt))[0];
  const std::string msg = runtime_error_of([&] { out.block_until_ready(); });
  EXPECT_NE(msg.find("data race"), std::string::npos) << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

TEST(TraceValue, PutsTheScalarOnTheDevicesLaneOfTheTimeline) {
  Watchdog dog(kTestLimit, "trace_value");
  Runtime rt(RuntimeOptions{.workers = 2});
  auto exe = kernel([](In x, Out y) {
               trace_value("device", axis_index("x"));
               trace_value("quarter", 0.25f);
               y.store(x.load());
             }).compile(Mesh{{"x", 2}}, {}, rt);
  EXPECT_NE(to_text(exe.program().graph).find(R"(trace_value["device"])"), std::string::npos);
  rt.start_timeline();
  exe(Array::generate<float>(2, Shape{kN}, tag, rt))[0].block_until_ready();
  const std::string json = rt.stop_timeline().json();
  for (const char* counter : {R"("name":"device 0 device")", R"("name":"device 1 device")", R"("name":"device 1 quarter")"})
    EXPECT_NE(json.find(counter), std::string::npos) << counter << " in\n" << json;
  const std::size_t one = json.find(R"("name":"device 1 device")");
  ASSERT_NE(one, std::string::npos);
  const std::string event = json.substr(one, json.find("}}", one) + 2 - one);
  EXPECT_NE(event.find(R"("args":{"value":1}})"), std::string::npos) << event;
  EXPECT_NE(json.find(R"("args":{"value":0.25})"), std::string::npos);
}

TEST(TraceValue, ABlockIsRefusedOnTheUsersLine) {
  const std::string msg = error_of([] {
    (void)kernel([](In x, Out y) {
      g_line = __LINE__; trace_value("x", x.load());
      y.store(x.load());
    }).compile(Mesh{{"x", 1}});
  });
  EXPECT_NE(msg.find("refx: trace_value: takes a scalar, got a f32[256] value"), std::string::npos) << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

}  // namespace
