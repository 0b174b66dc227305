// The cost of a controlled run (refx::explore, docs/runtime.md "Controlled
// schedules") against the same call on the threaded runtime, in the same
// run: each iteration makes 8 runtime calls (call_in_place, then waits) and
// explores 8 schedules of the same program on the same Arrays (random
// walks: the default schedule, then 7), timing each batch. The counters give
// both per call and their ratio (controlled / run; the target is <= 3).
// Arg 1 turns on the race detector on both sides (explore's default).
// BM_Explore1000: 1,000 PCT schedules of an 8-device ring all-reduce.
//
//   bench_explore --benchmark_filter=Controlled

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include <refx/collectives.hpp>
#include <refx/explore.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

namespace {
using namespace refx;
using Clock = std::chrono::steady_clock;

// A ring all-reduce of `elements` f32 per device on 8 devices.
void BM_Controlled(benchmark::State& state) {
  const std::int64_t elements = state.range(0);
  const bool races = state.range(1) != 0;
  Runtime rt(RuntimeOptions{.detect_races = races});
  const Mesh mesh{{"x", 8}};
  const Executable exe = collectives::all_reduce_program<float>(
      mesh, elements, {.in_place = true, .algorithm = collectives::Algorithm::ring}, rt);
  Array x = Array::generate<float>(
      8, Shape{elements}, [](std::int32_t d, std::int64_t i) { return float(d + i % 5); }, rt);
  constexpr int batch = 8;
  double run = 0, controlled = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (int i = 0; i < batch; ++i) {
      exe.call_in_place({x});
      x.block_until_ready();
    }
    const auto t1 = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the runtime's workers park
    const auto t2 = Clock::now();
    const ExploreReport r = explore(
        exe, {x}, {.strategy = ExploreStrategy::random, .runs = batch, .detect_races = races, .progress = false});
    const auto t3 = Clock::now();
    if (!r.ok()) state.SkipWithError(r.to_string().c_str());
    run += std::chrono::duration<double>(t1 - t0).count();
    controlled += std::chrono::duration<double>(t3 - t2).count();
  }
  const double n = static_cast<double>(state.iterations()) * batch;
  state.counters["run_us"] = run / n * 1e6;
  state.counters["controlled_us"] = controlled / n * 1e6;
  state.counters["ratio"] = controlled / run;
}
BENCHMARK(BM_Controlled)
    ->Args({1 << 10, 0})
    ->Args({1 << 18, 0})
    ->Args({1 << 10, 1})
    ->Args({1 << 18, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_Explore1000(benchmark::State& state) {
  const Mesh mesh{{"x", 8}};
  const Executable exe = collectives::all_reduce_program<float>(
      mesh, 1 << 10, {.in_place = true, .algorithm = collectives::Algorithm::ring});
  Array x = Array::generate<float>(8, Shape{1 << 10}, [](std::int32_t d, std::int64_t i) { return float(d + i % 5); });
  std::int64_t distinct = 0, steps = 0;
  for (auto _ : state) {
    const ExploreReport r = explore(exe, {x}, {.strategy = ExploreStrategy::pct, .runs = 1000, .progress = false});
    if (!r.ok()) state.SkipWithError(r.to_string().c_str());
    distinct = r.distinct;
    steps = r.max_steps;
  }
  state.counters["distinct"] = static_cast<double>(distinct);
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_Explore1000)->Iterations(1)->Repetitions(3)->UseRealTime()->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
