// Dispatch cost of Executable calls (issue 6: async dispatch with ordered
// effects). Every call returns at once, pure or effectful; these measure how
// long "at once" is.
//
// BM_DispatchVsTotal/<kind>/<devices>: a ~1 ms kernel (a fori_loop of
// elementwise work on a 64 Ki-float Vmem block, calibrated at start-up) in
// three variants, kind 0 = pure (an output Array, waited with
// block_until_ready), 1 = plus one ordered debug_print at the end (the sink
// counts and discards), 2 = plus one ordered io_callback at the end (a
// trivial function); the effectful ones are waited with effects_barrier().
// Per iteration: dispatch = time for `exe(x)` to return; total = time until
// the result / the effects are ready. Counters (medians over the iterations):
//   dispatch_us, total_us, dispatch_pct = 100 * dispatch / total
//
// BM_DispatchTrivial/<mode>/<devices>/<effectful>: a trivial kernel (one
// small store; effectful: plus one ordered debug_print).
//   mode 0 "idle": wait after each call, so every call finds an idle runtime;
//   mode 1 "back-to-back": 256 calls in a row, then one wait (the queue grows).
// Counters: dispatch_median_us, dispatch_p90_us (per call). The reported
// (manual) time is the mean dispatch time per call. Iteration counts are
// fixed: the manual time excludes the waits, which dominate the wall time.
//
// Results: docs/performance.md, "Dispatch and launch costs".

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

namespace {
using namespace refx;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kRows = 64, kCols = 1024;
using Block = VmemRef<const float, kRows, kCols>;
using OutBlock = VmemRef<float, kRows, kCols>;

enum Kind : int { pure = 0, ordered_print = 1, ordered_callback = 2 };

std::atomic<std::int64_t> g_sink_calls{0};
std::atomic<std::int64_t> g_callbacks{0};

Runtime& runtime() {
  static Runtime& rt = []() -> Runtime& {
    Runtime::global().set_print_sink([](std::string_view) { g_sink_calls.fetch_add(1, std::memory_order_relaxed); });
    return Runtime::global();
  }();
  return rt;
}

/// The ~1 ms kernel: `steps` rounds of y = y * 0.5 + x over the block.
Executable work_kernel(int kind, std::int32_t steps, int devices) {
  return kernel([kind, steps](Block x, OutBlock y) {
           y.store(x.load());
           fori_loop(0, steps, [&](Scalar<std::int32_t>) { y.store(y.load() * 0.5f + x.load()); });
           if (kind == ordered_print) debug_print(ordered, "done {}", y.at(0, 0).load());
           if (kind == ordered_callback)
             io_callback(
                 ordered, [](float) { g_callbacks.fetch_add(1, std::memory_order_relaxed); }, y.at(0, 0).load());
         })
      .name("work")
      .compile(Mesh{{"x", devices}}, {}, runtime());
}

Array block_input(int devices) {
  return Array::generate<float>(
      devices, Shape{kRows, kCols}, [](int d, std::int64_t i) { return float(d + i % 7); }, runtime());
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// Loop steps that make the kernel take about 1 ms (measured once).
std::int32_t calibrated_steps() {
  static const std::int32_t steps = [] {
    auto probe = work_kernel(pure, 16, 1);
    const Array x = block_input(1);
    probe(x)[0].block_until_ready();  // warm up
    double best = 1e9;
    for (int r = 0; r < 5; ++r) {
      const auto t0 = Clock::now();
      probe(x)[0].block_until_ready();
      best = std::min(best, seconds_since(t0));
    }
    return std::max<std::int32_t>(1, static_cast<std::int32_t>(16 * 1e-3 / best));
  }();
  return steps;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

void BM_DispatchVsTotal(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  const int devices = static_cast<int>(state.range(1));
  auto exe = work_kernel(kind, calibrated_steps(), devices);
  const Array x = block_input(devices);
  exe(x)[0].block_until_ready();
  effects_barrier(runtime());
  std::vector<double> dispatch, total;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    std::vector<Array> out = exe(x);
    const double d = seconds_since(t0);
    if (kind == pure) out[0].block_until_ready();
    else effects_barrier(runtime());
    const double t = seconds_since(t0);
    state.SetIterationTime(t);
    dispatch.push_back(d);
    total.push_back(t);
  }
  const double md = median(dispatch), mt = median(total);
  state.counters["dispatch_us"] = md * 1e6;
  state.counters["total_us"] = mt * 1e6;
  state.counters["dispatch_pct"] = 100.0 * md / mt;
  state.counters["steps"] = calibrated_steps();
  state.SetLabel(kind == pure ? "pure" : kind == ordered_print ? "ordered debug_print" : "ordered io_callback");
}
BENCHMARK(BM_DispatchVsTotal)
    ->ArgNames({"kind", "devices"})
    ->ArgsProduct({{pure, ordered_print, ordered_callback}, {1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(200);

Executable trivial_kernel(int devices, bool effectful) {
  return kernel([effectful](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
           y.store(x.load());
           if (effectful) debug_print(ordered, "{}", y.at(0).load());
         })
      .name("trivial")
      .compile(Mesh{{"x", devices}}, {}, runtime());
}

void BM_DispatchTrivial(benchmark::State& state) {
  const bool back_to_back = state.range(0) != 0;
  const int devices = static_cast<int>(state.range(1));
  const bool effectful = state.range(2) != 0;
  auto exe = trivial_kernel(devices, effectful);
  const Array x = Array::generate<float>(
      devices, Shape{8}, [](int, std::int64_t i) { return float(i); }, runtime());
  exe(x)[0].block_until_ready();
  std::vector<double> per_call;
  constexpr int kBurst = 256;
  std::vector<std::vector<Array>> outs;
  outs.reserve(kBurst);
  for (auto _ : state) {
    if (!back_to_back) {
      const auto t0 = Clock::now();
      std::vector<Array> out = exe(x);
      const double d = seconds_since(t0);
      state.SetIterationTime(d);
      per_call.push_back(d);
      out[0].block_until_ready();
    } else {
      double sum = 0;
      for (int i = 0; i < kBurst; ++i) {
        const auto t0 = Clock::now();
        outs.push_back(exe(x));
        const double d = seconds_since(t0);
        sum += d;
        per_call.push_back(d);
      }
      state.SetIterationTime(sum / kBurst);
      outs.back()[0].block_until_ready();
      outs.clear();
    }
    if (effectful) effects_barrier(runtime());
  }
  state.counters["dispatch_median_us"] = median(per_call) * 1e6;
  state.counters["dispatch_p90_us"] = percentile(per_call, 0.9) * 1e6;
  state.SetLabel(std::string(back_to_back ? "back-to-back" : "idle") +
                 (effectful ? ", ordered debug_print" : ", pure"));
}
BENCHMARK(BM_DispatchTrivial)
    ->ArgNames({"b2b", "devices", "effectful"})
    ->ArgsProduct({{0}, {1, 2}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(4000);
BENCHMARK(BM_DispatchTrivial)
    ->ArgNames({"b2b", "devices", "effectful"})
    ->ArgsProduct({{1}, {1, 2}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(100);

}  // namespace

BENCHMARK_MAIN();
