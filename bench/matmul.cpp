// refx dot against Eigen's own GEMM, in the same run (issue 23).
//
// BM_RefxDot<T>/<n>: a compiled one-device kernel, Vmem refs in, load,
// dot<float>, store, over n x n matrices (T = f32 or bf16, the result f32);
// each iteration is one whole call into an output Array allocated once
// (call_in_place), including the wait (block_until_ready).
// BM_EigenGemm/<n>: Eigen's single-threaded f32 GEMM, C.noalias() = A * B
// on row-major matrices, the baseline refx's GEMM is built on.
//
// Where refx's time goes outside the GEMM:
// BM_GemmDirect/<n>: refx::detail::gemm (the function dot calls) on plain
// vectors, no kernel: the GEMM alone. BM_RefxCopyOnly/<n>: the same kind of
// call as BM_RefxDot, whose kernel loads a and stores it into c: launch
// and one store copy (the loads read in place since issue 49).
// BM_Bf16GemmDirect/<n>/<panel>: the bf16 x bf16 -> f32 product alone, as
// dot computes it (refx::detail::bf16_dot, operands widened `panel`
// contraction indices at a time into reused scratch; the default panel is
// bf16_dot_panel), or with panel 0 as dot did before issue 49 (both
// operands widened whole into fresh buffers, then one f32 GEMM).
//
// Every row reports the median call (median_ms) and GFLOP/s (2 n^3 flops
// per call); each row but BM_EigenGemm and BM_RefxCopyOnly also runs the
// Eigen f32 GEMM of its size after every call it times (same machine load)
// and reports eigen_f32_ms (its median) and speed_vs_eigen = eigen_f32_ms /
// median_ms (1 = as fast as Eigen). Targets: f32 >= 0.8 (issue 23), bf16 ->
// f32 >= 0.9 (issue 49).
//
//   cmake -S . -B build/rel -G Ninja -DCMAKE_BUILD_TYPE=Release
//   cmake --build build/rel --target bench_matmul && build/rel/bench/bench_matmul

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include <refx/ir/gemm.hpp>
#include <refx/ir/primitives/dot.hpp>
#include <refx/refx.hpp>
// After refx: <refx/ir/gemm.hpp> includes Eigen first, with GCC 12's false
// AVX-512 warnings silenced, and that covers the baseline's GEMM too.
#include <Eigen/Core>

namespace {
using namespace refx;
using Clock = std::chrono::steady_clock;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Values in [-1, 1), exact in bf16.
float value(std::int64_t i, int salt) { return static_cast<float>((i * 37 + salt * 101) % 256 - 128) / 128.0f; }

double median(std::vector<double> v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

template <class F>
double seconds_of(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Eigen's f32 GEMM of size n on the benchmark's values: the baseline.
struct EigenGemm {
  RowMatrix a, b, c;
  explicit EigenGemm(std::int64_t n) : a(n, n), b(n, n), c(n, n) {
    for (std::int64_t i = 0; i < n * n; ++i) {
      a.data()[i] = value(i, 1);
      b.data()[i] = value(i, 2);
    }
  }
  void operator()() {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
};

void report(benchmark::State& state, std::int64_t n, std::vector<double> seconds) {
  const double med = median(std::move(seconds));
  state.counters["median_ms"] = med * 1e3;
  state.counters["GFLOPs"] = 2.0 * static_cast<double>(n * n * n) / med / 1e9;
}

/// Times `call` against Eigen's f32 GEMM of size n: each iteration times
/// one call and then one Eigen GEMM, so that both see the same machine load
/// (the ratio is what these rows are for).
template <class F>
void time_against_eigen(benchmark::State& state, std::int64_t n, F&& call) {
  EigenGemm eigen(n);
  call();
  eigen();
  std::vector<double> seconds, eigen_seconds;
  for (auto _ : state) {
    seconds.push_back(seconds_of(call));
    eigen_seconds.push_back(seconds_of(eigen));
  }
  report(state, n, seconds);
  const double eigen_median = median(std::move(eigen_seconds));
  state.counters["eigen_f32_ms"] = eigen_median * 1e3;
  state.counters["speed_vs_eigen"] = eigen_median / (state.counters["median_ms"] / 1e3);
}

template <class T, std::int64_t N>
void BM_RefxDot(benchmark::State& state) {
  Executable exe = kernel([](VmemRef<const T, N, N> a, VmemRef<const T, N, N> b, VmemRef<float, N, N> c) {
                     c.store(dot<float>(a.load(), b.load()));
                   }).compile(Mesh{{"x", 1}});
  auto a = Array::generate<T>(1, Shape{N, N}, [](int, std::int64_t i) { return static_cast<T>(value(i, 1)); });
  auto b = Array::generate<T>(1, Shape{N, N}, [](int, std::int64_t i) { return static_cast<T>(value(i, 2)); });
  Array c = exe(a, b)[0];
  const std::vector<Array> args{a, b, c};
  auto call = [&] {
    exe.call_in_place(args);
    c.block_until_ready();
  };
  time_against_eigen(state, N, call);
  state.SetLabel(std::is_same_v<T, float> ? "f32 x f32 -> f32" : "bf16 x bf16 -> f32");
}

template <std::int64_t N>
void BM_EigenGemm(benchmark::State& state) {
  EigenGemm eigen(N);
  std::vector<double> seconds;
  for (auto _ : state) seconds.push_back(seconds_of(eigen));
  report(state, N, seconds);
  state.SetLabel("Eigen f32, single-threaded");
}

template <std::int64_t N>
void BM_GemmDirect(benchmark::State& state) {
  std::vector<float> a(N * N), b(N * N), c(N * N);
  for (std::int64_t i = 0; i < N * N; ++i) {
    a[static_cast<std::size_t>(i)] = value(i, 1);
    b[static_cast<std::size_t>(i)] = value(i, 2);
  }
  time_against_eigen(state, N, [&] {
    refx::detail::gemm(DType::f32, a.data(), b.data(), c.data(), N, N, N, false);
    benchmark::DoNotOptimize(c.data());
  });
  state.SetLabel("refx::detail::gemm alone");
}

/// The bf16 product dot runs, alone (no kernel, no load or store copies):
/// Panel > 0: refx::detail::bf16_dot widening `Panel` contraction indices at
/// a time into reused scratch (what dot does: Panel = bf16_dot_panel);
/// Panel = 0: both operands widened whole into fresh buffers, then one f32
/// GEMM (what dot did before).
template <std::int64_t N, std::int64_t Panel>
void BM_Bf16GemmDirect(benchmark::State& state) {
  Buffer a(DType::bf16, Shape{N, N}), b(DType::bf16, Shape{N, N});
  for (std::int64_t i = 0; i < N * N; ++i) {
    a.data<bf16>()[i] = bf16(value(i, 1));
    b.data<bf16>()[i] = bf16(value(i, 2));
  }
  std::vector<float> c(N * N);
  time_against_eigen(state, N, [&] {
    if constexpr (Panel > 0) {
      refx::detail::bf16_dot(a.data<bf16>(), b.data<bf16>(), c.data(), N, N, N, /*trans_b=*/false, /*accumulate=*/false,
                             Panel);
    } else {
      Buffer wa(DType::f32, a.shape()), wb(DType::f32, b.shape());
      refx::detail::convert_buffer(a, wa);
      refx::detail::convert_buffer(b, wb);
      refx::detail::gemm(DType::f32, wa.data(), wb.data(), c.data(), N, N, N, false);
    }
    benchmark::DoNotOptimize(c.data());
  });
  state.SetLabel(Panel > 0 ? "bf16_dot, panels widened into scratch" : "widened whole into fresh buffers");
}

template <std::int64_t N>
void BM_RefxCopyOnly(benchmark::State& state) {
  Executable exe =
      kernel([](VmemRef<const float, N, N> a, VmemRef<float, N, N> c) { c.store(a.load()); }).compile(Mesh{{"x", 1}});
  auto a = Array::generate<float>(1, Shape{N, N}, [](int, std::int64_t i) { return value(i, 1); });
  Array c = exe(a)[0];
  const std::vector<Array> args{a, c};
  auto call = [&] {
    exe.call_in_place(args);
    c.block_until_ready();
  };
  call();
  std::vector<double> seconds;
  for (auto _ : state) seconds.push_back(seconds_of(call));
  const double med = median(std::move(seconds));
  state.counters["median_ms"] = med * 1e3;
  state.SetLabel("launch + load + store, no dot");
}

#define REFX_MATMUL_ROWS(n)                                                                                   \
  BENCHMARK_TEMPLATE(BM_EigenGemm, n)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);            \
  BENCHMARK_TEMPLATE(BM_RefxDot, float, n)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);       \
  BENCHMARK_TEMPLATE(BM_RefxDot, bf16, n)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);        \
  BENCHMARK_TEMPLATE(BM_GemmDirect, n)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);           \
  BENCHMARK_TEMPLATE(BM_Bf16GemmDirect, n, 0)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);    \
  BENCHMARK_TEMPLATE(BM_Bf16GemmDirect, n, 128)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);  \
  BENCHMARK_TEMPLATE(BM_Bf16GemmDirect, n, 256)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);  \
  BENCHMARK_TEMPLATE(BM_Bf16GemmDirect, n, 512)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);  \
  BENCHMARK_TEMPLATE(BM_Bf16GemmDirect, n, 1024)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5); \
  BENCHMARK_TEMPLATE(BM_RefxCopyOnly, n)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);

REFX_MATMUL_ROWS(256)
REFX_MATMUL_ROWS(512)
REFX_MATMUL_ROWS(1024)

}  // namespace

BENCHMARK_MAIN();
