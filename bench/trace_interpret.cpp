// The fixed costs of the core, per op: tracing a kernel into a Graph, printing
// it (to_text), and running it with the reference interpreter. The kernel is
// a C++ loop unrolled at trace time into a chain of ~4 ops per step over small
// f32[8] Values, with loads and stores through views:
//   v = x.at(k % 16).load();  acc = acc * v + v;  y.at(k % 16).store(acc);
// Each benchmark runs at ~10k and ~100k ops (the `ops` argument; the exact op
// count is what the counters use). Counters:
//   items_per_second  ops traced / printed / interpreted per second
//   time_per_op       time per op (seconds; printed with an SI prefix, e.g. 140ns)
// Results: docs/performance.md, section "Trace and compile time as the graph
// grows".

// GCC 12 at -O3 (the bench flags) reports false -Wstringop-overflow /
// -Wrestrict positives inside refx's headers (whole_view in ir/regions.hpp,
// string appends in ir/printer.hpp); they are off for the included code only.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include <refx/ir/interpret.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;

constexpr std::int64_t rows = 16, cols = 8;
using In = VmemRef<const float, rows, cols>;
using Out = VmemRef<float, rows, cols>;

/// A kernel of about `ops` ops (4 per unrolled step, plus one load).
auto chain_kernel(std::int64_t ops) {
  return [steps = ops / 4](In x, Out y) {
    auto acc = x.at(0).load();
    for (std::int64_t k = 0; k < steps; ++k) {
      const std::int64_t r = k % rows;
      auto v = x.at(r).load();
      acc = acc * v + v;
      y.at(r).store(acc);
    }
  };
}

void set_counters(benchmark::State& state, std::size_t ops) {
  const auto n = static_cast<double>(ops);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(ops));
  state.counters["ops"] = n;
  // Ops per second, inverted: seconds per op (shown as e.g. "140ns").
  state.counters["time_per_op"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Trace(benchmark::State& state) {
  const auto kernel = chain_kernel(state.range(0));
  std::size_t ops = 0;
  for (auto _ : state) {
    Graph g = trace(kernel);
    ops = g.num_ops();
    benchmark::DoNotOptimize(ops);
  }
  set_counters(state, ops);
}

void BM_Print(benchmark::State& state) {
  const Graph g = trace(chain_kernel(state.range(0)));
  for (auto _ : state) {
    std::string text = to_text(g);
    benchmark::DoNotOptimize(text.data());
  }
  set_counters(state, g.num_ops());
}

void BM_Interpret(benchmark::State& state) {
  const Graph g = trace(chain_kernel(state.range(0)));
  Buffer x = Buffer::from(Shape{rows, cols}, std::vector<float>(rows * cols, 0.5f));
  Buffer y(DType::f32, Shape{rows, cols});
  for (auto _ : state) {
    interpret(g, x, y);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, g.num_ops());
}

}  // namespace

BENCHMARK(BM_Trace)->ArgName("ops")->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Print)->ArgName("ops")->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Interpret)->ArgName("ops")->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
