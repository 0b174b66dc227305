// A launch reuses the device states (ExecContexts: scratch, semaphores, value
// buffers) of the previous successful launch of its program: later calls
// build none and still compute the right results; semaphores start at 0; a
// failed launch's states are dropped, not reused. (That checked mode poisons
// reused scratch again: CheckedMode.LazyCopiesExposeAReadBeforeWait.)

#include <gtest/gtest.h>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kBlock = 48;
using In = VmemRef<const float, kBlock>;
using Out = VmemRef<float, kBlock>;

/// Twice x, computed into scratch, then sent to the right neighbour's y.
Executable doubled_permute(int n, Runtime& rt) {
  return kernel([n](In x, Out y) {
           auto right = (axis_index("x") + 1) % n;
           run_scoped([&](VmemRef<float, kBlock> buf, DmaSemaphore send, DmaSemaphore recv) {
             buf.store(x.load() * 2.0f);
             auto c = make_async_remote_copy(buf, y, send, recv, right);
             c.start();
             c.wait();
           });
         })
      .name("doubled_permute")
      .compile(Mesh{{"x", n}}, {}, rt);
}

Array tagged(int n, int call, Runtime& rt) {
  return Array::generate<float>(n, Shape{kBlock}, [call](int d, std::int64_t i) { return tag(d, i) + call; }, rt);
}

class ContextReuse : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Devices, ContextReuse, device_counts(), DeviceCountName{});

TEST_P(ContextReuse, OnlyTheFirstCallBuildsDeviceStates) {
  Watchdog dog(kTestLimit, "context reuse");
  const int n = GetParam();
  Runtime rt({.workers = 2});
  auto exe = doubled_permute(n, rt);
  StatsDelta delta(rt);
  for (int call = 0; call < 40; ++call) {
    auto out = exe(tagged(n, call, rt));
    ASSERT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) { return 2 * (tag(mod(d - 1, n), i) + call); }))
        << "call " << call;
  }
  EXPECT_EQ(delta.get().contexts_built, n);
  EXPECT_EQ(delta.launches(), 40);
  // Another program has its own states.
  auto other = doubled_permute(n, rt);
  other(tagged(n, 0, rt))[0].block_until_ready();
  EXPECT_EQ(delta.get().contexts_built, 2 * n);
}

// Device 0 signals once more than it waits when its flag is set.
TEST_P(ContextReuse, AFailedLaunchsStatesAreNotReused) {
  Watchdog dog(kTestLimit, "no reuse after a failure");
  const int n = GetParam();
  Runtime rt({.workers = 2});
  auto exe = kernel([](SmemRef<const std::int32_t> extra, In x, Out y) {
               run_scoped([&](RegularSemaphore s) {
                 s.name("counted");
                 semaphore_signal(s, 1);
                 when(extra.load() != 0, [&] { semaphore_signal(s, 1); });
                 semaphore_wait(s, 1);
                 y.store(x.load() + 1.0f);
               });
             })
                 .name("counted")
                 .passes(unverified())
                 .compile(Mesh{{"x", n}}, {}, rt);
  const auto flag = [&](bool leak) {
    return Array::generate<std::int32_t>(n, Shape{}, [leak](int d, std::int64_t) { return leak && d == 0; }, rt);
  };
  const auto good_call = [&] {
    auto out = exe(flag(false), tagged(n, 0, rt));
    ASSERT_TRUE(all_shards_match<float>(out[0], [](int d, std::int64_t i) { return tag(d, i) + 1; }));
  };
  StatsDelta delta(rt);
  good_call();
  good_call();
  EXPECT_EQ(delta.get().contexts_built, n);
  auto bad = exe(flag(true), tagged(n, 0, rt));
  const std::string msg = runtime_error_of([&] { bad[0].block_until_ready(); });
  EXPECT_NE(msg.find("device 0: regular semaphore 'counted' ends at 1"), std::string::npos) << msg;
  // The failed call's semaphores are not carried into the next one.
  good_call();
  good_call();
  EXPECT_EQ(delta.get().contexts_built, 2 * n);
}

}  // namespace
