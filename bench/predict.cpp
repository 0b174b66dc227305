// The cost of a predicted call (refx::predict, docs/targets.md "Predicted
// time") against the same call on the threaded runtime, in the same run:
// each iteration makes 8 runtime calls (call_in_place, then waits) and 8
// predicted calls of the same program on the same Arrays, timing each batch
// (the reported Time includes a 20 ms pause between them); the counters give
// both per call and their ratio (predict / run; the target is <= 1.3).
//
//   bench_predict --benchmark_filter=AllReduce

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;
using Clock = std::chrono::steady_clock;

void compare(benchmark::State& state, const Executable& exe, const std::vector<Array>& args, const Target& t) {
  constexpr int batch = 8;
  double run = 0, predicted = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (int i = 0; i < batch; ++i) {
      exe.call_in_place(args);
      for (const Array& a : args) a.block_until_ready();
    }
    const auto t1 = Clock::now();
    // The runtime's idle workers spin a while before they park: let them
    // park, so that they do not share the cores with the prediction.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto t2 = Clock::now();
    for (int i = 0; i < batch; ++i) benchmark::DoNotOptimize(predict(exe, t, args).seconds());
    const auto t3 = Clock::now();
    run += std::chrono::duration<double>(t1 - t0).count();
    predicted += std::chrono::duration<double>(t3 - t2).count();
  }
  const double n = static_cast<double>(state.iterations()) * batch;
  state.counters["run_us"] = run / n * 1e6;
  state.counters["predict_us"] = predicted / n * 1e6;
  state.counters["ratio"] = predicted / run;
}

// A ring all-reduce of `elements` f32 per device on 8 devices (v5p {x=8}).
void BM_AllReduce(benchmark::State& state) {
  const std::int64_t elements = state.range(0);
  const Mesh mesh{{"x", 8}};
  const Executable exe = collectives::all_reduce_program<float>(
      mesh, elements, {.in_place = true, .algorithm = collectives::Algorithm::ring});
  Array x = Array::generate<float>(8, Shape{elements}, [](std::int32_t d, std::int64_t i) { return float(d + i % 5); });
  compare(state, exe, {x}, targets::v5p());
}
BENCHMARK(BM_AllReduce)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The collective matmul (bf16, 4 devices): compute-heavy.
void BM_CollectiveMatmul(benchmark::State& state) {
  const std::int64_t m = 128, k = 256, cols = state.range(0);
  const Mesh mesh{{"x", 4}};
  const Executable exe = collectives::collective_matmul_program<bf16>(mesh, m, k, cols);
  Array a = Array::generate<bf16>(4, Shape{m, k}, [](std::int32_t d, std::int64_t i) { return float((d + i) % 3); });
  Array b = Array::generate<bf16>(4, Shape{k, cols}, [](std::int32_t, std::int64_t i) { return float(i % 2); });
  Array out = Array::empty(4, DType::bf16, Shape{4 * m, cols});
  compare(state, exe, {a, b, out}, targets::v5p());
}
BENCHMARK(BM_CollectiveMatmul)->Arg(256)->Arg(2048)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
