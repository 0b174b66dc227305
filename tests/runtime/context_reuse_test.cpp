// A launch reuses the device states (ExecContexts: scratch, semaphores, value
// buffers) of the previous successful launch of its program: later calls
// build none and still compute the right results; semaphores start at 0; a
// failed launch's states are dropped, not reused. (That checked mode poisons
// reused scratch again: CheckedMode.LazyCopiesExposeAReadBeforeWait.) Each
// device gets its own state back, and the results of pure ops on device
// constants stand: they run once per device, not once per call.

#include <gtest/gtest.h>

#include <atomic>

#include <refx/extend/primitive.hpp>
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

// x + 1000 on an i32 scalar, counting its runs in *Runs.
template <std::atomic<int>* Runs>
ExecStatus plus_1000_impl(ExecContext& ctx, const Op& op) {
  Runs->fetch_add(1);
  *ctx.out(op, 0).data<std::int32_t>() = *ctx.in(op, 0).data<std::int32_t>() + 1000;
  return ExecStatus::done;
}
void same_type_abstract(AbstractContext& c) { c.add_output(c.input(0)); }

std::atomic<int> kept_runs{0}, plain_runs{0}, loaded_runs{0};
// The same op three times: pure (on device constants, then on a loaded
// value) and not pure.
const Primitive& kept_p = define_primitive(Primitive{
    .name = "test_kept_plus_1000", .abstract_eval = same_type_abstract, .impl = plus_1000_impl<&kept_runs>, .pure = true});
const Primitive& loaded_p = define_primitive(Primitive{.name = "test_loaded_plus_1000",
                                                       .abstract_eval = same_type_abstract,
                                                       .impl = plus_1000_impl<&loaded_runs>,
                                                       .pure = true});
const Primitive& plain_p = define_primitive(
    Primitive{.name = "test_plain_plus_1000", .abstract_eval = same_type_abstract, .impl = plus_1000_impl<&plain_runs>});

Executable plus_1000_kernel(int n, Runtime& rt) {
  return kernel([](SmemRef<const std::int32_t> s, SmemRef<std::int32_t, 3> out) {
           const auto twice_me = axis_index("x") * 2;
           out.at(0).store(extend::bind<std::int32_t>(kept_p, twice_me));
           out.at(1).store(extend::bind<std::int32_t>(plain_p, twice_me));
           out.at(2).store(extend::bind<std::int32_t>(loaded_p, s.load() + axis_index("x")));
         })
      .name("plus_1000")
      .compile(Mesh{{"x", n}}, {}, rt);
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

TEST_P(ContextReuse, PureOpsOnDeviceConstantsRunOncePerDevice) {
  Watchdog dog(kTestLimit, "kept results");
  const int n = GetParam();
  constexpr int calls = 5;
  const auto run = [&](Runtime& rt) {
    kept_runs = plain_runs = loaded_runs = 0;
    auto exe = plus_1000_kernel(n, rt);
    for (int call = 0; call < calls; ++call) {
      auto s = Array::generate<std::int32_t>(n, Shape{}, [call](int, std::int64_t) { return 10 * call; }, rt);
      auto out = exe(s);
      ASSERT_TRUE(all_shards_match<std::int32_t>(out[0], [&](int d, std::int64_t i) {
        return i < 2 ? 2 * d + 1000 : 10 * call + d + 1000;
      })) << "call " << call;
    }
  };
  Runtime rt({.workers = 2});
  run(rt);
  EXPECT_EQ(kept_runs, n);  // once per device: its state and result are its own
  EXPECT_EQ(plain_runs, calls * n);
  EXPECT_EQ(loaded_runs, calls * n);  // its input is read from a Ref every call
  // Observers (here the race detector) see every op of every call.
  Runtime checked({.workers = 2, .detect_races = true});
  run(checked);
  EXPECT_EQ(kept_runs, calls * n);
}

// The runtime gives each device its own state back; a state run on another
// device computes its kept results again.
TEST(ContextReuse, AStateRunOnAnotherDeviceComputesItsKeptResultsAgain) {
  struct OnDevice : ExecEnv {
    std::int32_t id = 1;
    std::int32_t device_id() const override { return id; }
    std::int32_t axis_index(std::string_view) const override { return id; }
    std::int32_t axis_size(std::string_view) const override { return 4; }
  };
  const Graph g = trace([](SmemRef<std::int32_t> out) { out.store(axis_index("x") * 10 + 1); });
  OnDevice env;
  Buffer out(DType::i32, Shape{});
  ExecContext ctx(g, env);
  const auto run = [&] {
    ctx.bind_param(0, out);
    EXPECT_EQ(ctx.run(), ExecStatus::done);
    return contents<std::int32_t>(out)[0];
  };
  EXPECT_EQ(run(), 11);
  env.id = 3;
  ctx.reset(env);
  EXPECT_EQ(run(), 31);
  ctx.reset(env);
  EXPECT_EQ(run(), 31);
}

}  // namespace
