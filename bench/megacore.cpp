// The megacore matmul (issue 48): the same pipelined matmul kernel on one
// device with 2 cores (Mesh::with_cores(2); its (i, j) grid dimensions
// parallel, k arbitrary) against the kernel on 1 core, in the same run.
//
// BM_MegacoreMatmul/<cores>: C = A @ B at 1024^3 f32, 256^3 blocks, an f32
// accumulator in Vmem scratch; each iteration is one call into an output
// allocated once (call_in_place) including the wait, the two forms
// alternating call by call so that both see the same machine. Reports
// median_ms for each and, on the 2-core run, speedup_vs_1_core =
// one_core_ms / median_ms (target on a 2-core machine: >= 1.6). What the
// machine allows at that moment is measured alongside, in the same
// iterations: the same 64 block GEMMs (Eigen, single-threaded each, as refx's
// dot) on one thread against two threads of 32 each, machine_2_thread_scaling
// = one_thread_ms / two_threads_ms (other load on the machine lowers both).
//
//   cmake --preset release && cmake --build --preset release --target bench_megacore -j2 &&
//   build/release/bench/bench_megacore

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include <refx/ir/gemm.hpp>
#include <refx/refx.hpp>
// After refx: <refx/ir/gemm.hpp> includes Eigen first, with GCC 12's false
// AVX-512 warnings silenced.
#include <Eigen/Core>
#include <thread>

namespace {
using namespace refx;
using Clock = std::chrono::steady_clock;
using I = std::int64_t;

constexpr I kN = 1024, kB = 256;

const auto matmul = pipeline_kernel<HbmRef<const float, kN, kN>, HbmRef<const float, kN, kN>, HbmRef<float, kN, kN>>(
    grid(kN / kB, kN / kB, kN / kB).dimension_semantics(parallel, parallel, arbitrary),
    [](VmemRef<const float, kB, kB> ab, VmemRef<const float, kB, kB> bb, VmemRef<float, kB, kB> cb,
       VmemRef<float, kB, kB> acc) {
      if (program_id(2) == 0) acc.store(0.0f);
      acc += dot<float>(ab.load(), bb.load());
      if (program_id(2) == num_programs(2) - 1) cb.store(acc.load());
    },
    block<kB, kB>([](I i, I, I k) {
      return std::array{i, k};
    }),
    block<kB, kB>([](I, I j, I k) {
      return std::array{k, j};
    }),
    block<kB, kB>([](I i, I j, I) {
      return std::array{i, j};
    }),
    scratch<VmemRef<float, kB, kB>>());

float value(std::int64_t i, int salt) { return static_cast<float>((i * 37 + salt * 101) % 256 - 128) / 128.0f; }

double median(std::vector<double> v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

struct Form {
  Executable exe;
  std::vector<Array> args;
  double call() const {
    const auto t0 = Clock::now();
    exe.call_in_place(args);
    args[2].block_until_ready();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
};

Form make(std::int32_t cores) {
  Executable exe = kernel(matmul).compile(Mesh{{"x", 1}}.with_cores(cores));
  const Array a = Array::generate<float>(1, Shape{kN, kN}, [](int, std::int64_t i) { return value(i, 1); });
  const Array b = Array::generate<float>(1, Shape{kN, kN}, [](int, std::int64_t i) { return value(i, 2); });
  Array c = exe(a, b)[0];
  c.block_until_ready();
  return Form{std::move(exe), {a, b, c}};
}

// The machine's own scaling: `blocks` kB x kB GEMMs (accumulating, as the
// kernel's dot into its accumulator) on each of `threads` threads.
double gemm_seconds(int threads, int blocks) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([blocks, t] {
      RowMatrix a = RowMatrix::Constant(kB, kB, 0.5f + t), b = RowMatrix::Constant(kB, kB, 0.25f);
      RowMatrix c = RowMatrix::Zero(kB, kB);
      for (int r = 0; r < blocks; ++r) c.noalias() += a * b;
      benchmark::DoNotOptimize(c.data());
    });
  for (auto& t : pool) t.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void BM_MegacoreMatmul(benchmark::State& state) {
  const auto cores = static_cast<std::int32_t>(state.range(0));
  const Form measured = make(cores), one_core = make(1);
  constexpr int steps = static_cast<int>((kN / kB) * (kN / kB) * (kN / kB));
  std::vector<double> times, baseline, one_thread, two_threads;
  for (auto _ : state) {
    const double t = measured.call();
    state.SetIterationTime(t);
    times.push_back(t);
    baseline.push_back(one_core.call());
    one_thread.push_back(gemm_seconds(1, steps));
    two_threads.push_back(gemm_seconds(2, steps / 2));
  }
  const double med = median(times), base = median(baseline);
  state.counters["machine_2_thread_scaling"] = median(one_thread) / median(two_threads);
  state.counters["median_ms"] = med * 1e3;
  state.counters["one_core_ms"] = base * 1e3;
  state.counters["GFLOPs"] = 2.0 * static_cast<double>(kN * kN * kN) / med / 1e9;
  state.counters["speedup_vs_1_core"] = base / med;
}
BENCHMARK(BM_MegacoreMatmul)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
