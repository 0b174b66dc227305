// Stress: many devices, many iterations, many dispatches; every result
// checked, and the process' heap back to its baseline afterwards.
//
//   - 64 devices x 1,000 all-reduce calls (fresh inputs each, every device's
//     result checked), on a runtime of the machine's worker count;
//   - 64 devices x 1,000 iterations of an all-reduce inside one kernel
//     (a fori_loop around collectives::all_reduce: semaphores reused);
//   - 40,000 back-to-back dispatches of a permute-and-increment kernel, each
//     call's output the next call's input, none waited for until the end;
//   - memory: after each, with the Arrays gone and refx's freed-block cache
//     released (release_cached_memory), the heap holds what it held before
//     (glibc's count, or the sanitizer allocator's; ASan's leak check runs
//     at exit under the asan preset).
//
// REFX_STRESS_ITERATIONS and REFX_STRESS_DISPATCHES override the counts
// (sanitizer builds use 100 and 2,000).

#include <gtest/gtest.h>

#include <refx/collectives.hpp>
#include <refx/runtime/runtime.hpp>

#include "reliability/reliability_testing.hpp"
#include "support/collectives_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr int kDevices = 64;
constexpr std::int64_t kElements = 96;
constexpr int kRing = 4;  // devices of the back-to-back kernel
constexpr std::int64_t kBlock = 64;
/// Heap growth tolerated after a stress run (bytes): far below what one
/// leaked buffer per call (or per device and call) would add up to.
constexpr std::int64_t kSlack = 256 << 10;
/// Growth tolerated over the second half of a run, when every pool and
/// queue has reached its working size. glibc counts the chunks each thread
/// keeps in its tcache as in use, so the count moves by up to ~20 KB with
/// which threads last freed what (the host thread runs pool tasks while it
/// waits); a leak of 2 bytes per call of the 40,000-dispatch run, or of one
/// byte per device and call of the 64-device run, exceeds it.
constexpr std::int64_t kSecondHalfSlack = 32 << 10;

std::int64_t iterations() { return env_count("REFX_STRESS_ITERATIONS", kSanitized ? 100 : 1000); }
std::int64_t dispatches() { return env_count("REFX_STRESS_DISPATCHES", kSanitized ? 2000 : 40000); }

/// Heap bytes in use once refx's cache of freed blocks is emptied and the
/// workers have let go of finished launches (a launch's event is set before
/// the last worker drops the launch, so the count settles a moment later).
std::int64_t settled_heap() {
  std::int64_t last = -1;
  for (int k = 0; k < 100; ++k) {
    release_cached_memory();
    const std::int64_t now = allocated_bytes();
    if (now == last) return now;
    last = now;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return last;
}

using Vec = Ref<std::int32_t, extents<dyn>, Hbm>;

TEST(Stress, AllReduceOn64DevicesAThousandTimes) {
  const std::int64_t calls = iterations();
  Watchdog dog(std::chrono::milliseconds(110000), "64-device all_reduce x " + std::to_string(calls));
  Runtime rt;
  const Mesh mesh{{"x", kDevices}};
  const Executable exe = collectives::all_reduce_program<std::int32_t>(mesh, kElements, {}, rt);
  const auto warm = inputs<std::int32_t>(kDevices, kElements, 0);
  (void)exe(array_of(warm, Shape{kElements}, rt))[0].block_until_ready();
  const std::int64_t before = settled_heap();
  constexpr int kWave = 25;  // dispatched together, then checked
  std::int64_t mid = -1;
  for (std::int64_t k = 0; k < calls; k += kWave) {
    if (mid < 0 && k >= calls / 2) mid = settled_heap();
    std::vector<std::vector<std::vector<std::int32_t>>> host;
    std::vector<Array> outs;
    for (std::int64_t j = k; j < std::min(calls, k + kWave); ++j) {
      host.push_back(inputs<std::int32_t>(kDevices, kElements, static_cast<int>(j) + 1));
      outs.push_back(exe(array_of(host.back(), Shape{kElements}, rt))[0]);
    }
    for (std::size_t j = 0; j < outs.size(); ++j) {
      const auto want = reduce(host[j], ReduceOp::sum);
      for (int d = 0; d < kDevices; ++d)
        ASSERT_TRUE(matches(outs[j].to_host<std::int32_t>(d), want,
                            fmt::format("call {}, device {}", k + static_cast<std::int64_t>(j), d)));
    }
  }
  rt.drain();
  const std::int64_t after = settled_heap();
  report(calls, fmt::format("all-reduce calls on {} devices (stress)", kDevices));
  std::printf("heap before %lld, half-way %lld, after %lld bytes\n", static_cast<long long>(before),
              static_cast<long long>(mid), static_cast<long long>(after));
  EXPECT_LE(after - before, kSlack) << "the heap grew by " << (after - before) << " bytes over " << calls << " calls";
  EXPECT_LE(after - mid, kSecondHalfSlack) << "the heap grew by " << (after - mid) << " bytes over the last "
                                           << calls - calls / 2 << " calls (a leak per call)";
}

TEST(Stress, AThousandAllReducesInsideOneKernelOn64Devices) {
  const std::int64_t iters = iterations();
  Watchdog dog(std::chrono::milliseconds(110000), "all_reduce in a fori_loop");
  Runtime rt;
  const auto host = inputs<std::int32_t>(kDevices, kElements, 7);
  // The program is made and dropped inside the measurement: it keeps its
  // last call's device states (runtime.md, static allocation) until then.
  const std::int64_t before = settled_heap();
  {
    // x = max over devices of (x + me + 1), `iters` times: after the first
    // iteration every device holds the same M, then M grows by 64 each time.
    const Executable exe = kernel([iters](Vec x) {
                             const auto me = axis_index("x");
                             run_scoped({x.shape()}, [&](Ref<std::int32_t, extents<dyn>, Vmem> v) {
                               fori_loop(0, static_cast<std::int32_t>(iters), [&](Scalar<std::int32_t>) {
                                 sync_copy(x, v);
                                 v.store(v.load() + me + 1);
                                 sync_copy(v, x);
                                 collectives::all_reduce(x, "x", ReduceOp::max);
                               });
                             });
                           })
                               .name("looped_all_reduce")
                               .compile(Mesh{{"x", kDevices}}, {Shape{kElements}}, rt);
    const Array x = array_of(host, Shape{kElements}, rt);
    exe.call_in_place({x});
    std::vector<std::int32_t> want(static_cast<std::size_t>(kElements));
    std::vector<std::vector<std::int32_t>> cur = host;
    for (std::int64_t k = 0; k < iters; ++k) {
      for (int d = 0; d < kDevices; ++d)
        for (auto& e : cur[static_cast<std::size_t>(d)]) e += d + 1;
      const auto m = reduce(cur, ReduceOp::max);
      for (auto& s : cur) s = m.value;
    }
    for (int d = 0; d < kDevices; ++d)
      ASSERT_TRUE(matches(x.to_host<std::int32_t>(d), cur[static_cast<std::size_t>(d)], fmt::format("device {}", d)));
  }
  rt.drain();
  const std::int64_t after = settled_heap();
  report(iters, fmt::format("all-reduce iterations inside one kernel on {} devices (stress)", kDevices));
  std::printf("heap before %lld, after %lld bytes\n", static_cast<long long>(before), static_cast<long long>(after));
  EXPECT_LE(after - before, kSlack) << "the heap grew by " << (after - before) << " bytes";
}

TEST(Stress, FortyThousandBackToBackDispatches) {
  const std::int64_t calls = dispatches();
  Watchdog dog(std::chrono::milliseconds(110000), "back-to-back dispatches");
  constexpr int n = kRing;
  constexpr std::int64_t m = kBlock;
  const std::int64_t before_runtime = settled_heap();
  {
    Runtime rt;
    // Each call: a handshake with the left neighbour, my block to the right
    // neighbour's y, then y += 1. After k calls device d holds the input of
    // device d - k, plus k.
    const Executable exe = kernel([](VmemRef<const std::int32_t, m> x, VmemRef<std::int32_t, m> y) {
                             const auto me = axis_index("x");
                             const auto right = (me + 1) % kRing, left = (me + kRing - 1) % kRing;
                             run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                               semaphore_signal(ready, 1, left);
                               semaphore_wait(ready, 1);
                               const auto c = make_async_remote_copy(x, y, send, recv, right);
                               c.start();
                               c.wait();
                               y.store(y.load() + 1);
                             });
                           })
                               .name("permute_increment")
                               .compile(Mesh{{"x", n}}, {}, rt);
    const auto host = inputs<std::int32_t>(n, m, 3);
    (void)exe(array_of(host, Shape{m}, rt))[0].block_until_ready();  // warm up
    const std::int64_t before = settled_heap();
    std::int64_t mid = -1;
    const StatsDelta stats(rt);
    {
      Array a = array_of(host, Shape{m}, rt);
      for (std::int64_t k = 0; k < calls / 2; ++k) a = exe(a)[0];  // none waited for
      a.block_until_ready();
      mid = settled_heap();
      for (std::int64_t k = calls / 2; k < calls; ++k) a = exe(a)[0];
      for (int d = 0; d < n; ++d) {
        std::vector<std::int32_t> want = host[static_cast<std::size_t>(mod(d - static_cast<int>(calls % n), n))];
        for (auto& e : want) e += static_cast<std::int32_t>(calls);
        ASSERT_TRUE(matches(a.to_host<std::int32_t>(d), want, fmt::format("device {}", d)));
      }
    }
    EXPECT_EQ(stats.launches(), calls);
    EXPECT_EQ(stats.get().copies, calls * n);
    rt.drain();
    const std::int64_t after = settled_heap();
    std::printf("heap before %lld, half-way %lld, after %lld bytes\n", static_cast<long long>(before),
                static_cast<long long>(mid), static_cast<long long>(after));
    EXPECT_LE(after - before, kSlack) << "the heap grew by " << (after - before) << " bytes over " << calls << " dispatches";
    EXPECT_LE(after - mid, kSecondHalfSlack) << "the heap grew by " << (after - mid) << " bytes over the last "
                                             << calls - calls / 2 << " dispatches (a leak per dispatch)";
  }
  // The runtime itself (its pool, its barrier semaphores) is gone too.
  const std::int64_t after_runtime = settled_heap();
  EXPECT_LE(after_runtime - before_runtime, kSlack) << "the heap grew by " << (after_runtime - before_runtime)
                                                    << " bytes with the runtime destroyed";
  std::printf("heap before the runtime %lld, after %lld bytes\n", static_cast<long long>(before_runtime),
              static_cast<long long>(after_runtime));
  report(calls, "back-to-back dispatches (stress)");
}

}  // namespace
