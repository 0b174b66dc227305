// emit_pipeline against hand-written baselines, in the same run (issue 24).
//
// BM_PipelinedElementwise/<block rows>: z = x + 1 over 64 MiB of Hbm f32
// (4096 x 4096) on one device, a 1-D grid of row blocks of 4096 columns
// copied through a ring of two Vmem slots; each iteration is one call into
// an output allocated once (call_in_place) including the wait. After each
// call it times the baseline, a plain loop z[i] = x[i] + 1 over the same
// amount of memory (two std::vectors of 64 MiB), and reports GB/s for both
// (bytes read + written) and bandwidth_vs_loop = loop_ms / median_ms
// (target >= 0.8), with passes::Options::forward_copies off (the copies as
// written); <block rows, true>: the same compiled as by default, the copies
// forwarded, one pass over each block. The third baseline, `staged`, is the pipeline's own work
// written by hand on one thread -- copy a block into a buffer, add one into a
// second buffer, copy that back -- and bandwidth_vs_staged = staged_ms /
// median_ms says how refx's schedule compares with that work done serially
// (docs/performance.md, "Against a hand-written loop": the three passes, not
// the scheduling, bound the first ratio on this machine).
//
// BM_PipelinedMatmul<T>/<block>: C = A @ B at 2048^3, A and B of element
// type T (f32 or bf16) in Hbm, a 3-D grid (i, j, k) of <block>^3 blocks, an
// f32 accumulator in Vmem scratch, C (f32) written back when k ends. After
// each call it times Eigen's single-threaded f32 GEMM of the same size and
// reports speed_vs_eigen = eigen_ms / median_ms (targets: f32 >= 0.7,
// bf16 >= 0.4). BM_PipelinedMatmul<T, 128, 512>: the shape of
// examples/pipelined_matmul, 512^3 in 128^3 blocks (grid 4x4x4), against
// Eigen's f32 512^3 (issue 49's row: bf16 >= 0.8); us_per_step is the call's
// time per grid step, over_eigen_us_per_step what a step costs beyond
// Eigen's time for one block product.
//
// BM_PipelineStepCost<T, Evaluated>: that pipeline without its arithmetic
// (copies, semaphores and the ops around them), time per step against the
// same block copies done by hand (speed_vs_hand = hand_ms / median_ms).
//
//   cmake --preset release -B build/rel
//   nice -n 15 cmake --build build/rel --target bench_pipeline -j1 && build/rel/bench/bench_pipeline

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include <refx/ir/gemm.hpp>
#include <refx/refx.hpp>
// After refx: <refx/ir/gemm.hpp> includes Eigen first, with GCC 12's false
// AVX-512 warnings silenced, and that covers the baseline's GEMM too.
#include <Eigen/Core>

namespace {
using namespace refx;
using Clock = std::chrono::steady_clock;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using I = std::int64_t;

constexpr I kRows = 4096, kCols = 4096;  // 64 MiB of f32
constexpr I kN = 2048;                   // matmul size

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

template <I BR, bool Forward = false>
void BM_PipelinedElementwise(benchmark::State& state) {
  passes::Options options;
  options.forward_copies = Forward;
  Executable exe =
      kernel([](HbmRef<const float, kRows, kCols> x, HbmRef<float, kRows, kCols> z) {
        const auto rows = [](I i) { return std::array{i, I{0}}; };
        emit_pipeline(grid(kRows / BR), [](VmemRef<const float, BR, kCols> xb, VmemRef<float, BR, kCols> zb) {
          zb.store(xb.load() + 1.0f);
        })(in(x, block<BR, kCols>(rows)), out(z, block<BR, kCols>(rows)));
      })
          .passes(options)
          .compile(Mesh{{"x", 1}});
  const Array x = Array::generate<float>(1, Shape{kRows, kCols}, [](int, std::int64_t i) { return value(i, 1); });
  Array z = exe(x)[0];
  const std::vector<Array> args{x, z};
  const auto call = [&] {
    exe.call_in_place(args);
    z.block_until_ready();
  };
  std::vector<float> hx(static_cast<std::size_t>(kRows * kCols)), hz(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = value(static_cast<std::int64_t>(i), 1);
  const auto loop = [&] {
    const float* __restrict src = hx.data();
    float* __restrict dst = hz.data();
    for (std::size_t i = 0; i < hx.size(); ++i) dst[i] = src[i] + 1.0f;
    benchmark::DoNotOptimize(hz.data());
  };
  // The pipeline's own work written by hand on one thread: each block copied
  // into a buffer, the body over the buffers, the result copied back (what
  // refx's schedule does, without the overlap).
  std::vector<float> in_block(static_cast<std::size_t>(BR * kCols)), out_block(in_block.size());
  const auto staged = [&] {
    for (I b = 0; b < kRows / BR; ++b) {
      const std::size_t at = static_cast<std::size_t>(b * BR * kCols), n = in_block.size();
      std::memcpy(in_block.data(), hx.data() + at, n * sizeof(float));
      const float* __restrict src = in_block.data();
      float* __restrict dst = out_block.data();
      for (std::size_t i = 0; i < n; ++i) dst[i] = src[i] + 1.0f;
      std::memcpy(hz.data() + at, out_block.data(), n * sizeof(float));
    }
    benchmark::DoNotOptimize(hz.data());
  };
  call();
  loop();
  staged();
  std::vector<double> seconds, loop_seconds, staged_seconds;
  for (auto _ : state) {
    seconds.push_back(seconds_of(call));
    loop_seconds.push_back(seconds_of(loop));
    staged_seconds.push_back(seconds_of(staged));
  }
  const bool ok = z.to_host<float>(0)[12345] == value(12345, 1) + 1.0f && hz[12345] == value(12345, 1) + 1.0f;
  const double med = median(std::move(seconds)), loop_med = median(std::move(loop_seconds)),
               staged_med = median(std::move(staged_seconds));
  const double bytes = 2.0 * static_cast<double>(kRows * kCols) * sizeof(float);
  state.counters["median_ms"] = med * 1e3;
  state.counters["GBps"] = bytes / med / 1e9;
  state.counters["loop_ms"] = loop_med * 1e3;
  state.counters["loop_GBps"] = bytes / loop_med / 1e9;
  state.counters["bandwidth_vs_loop"] = loop_med / med;
  state.counters["staged_ms"] = staged_med * 1e3;
  state.counters["bandwidth_vs_staged"] = staged_med / med;
  state.SetLabel(ok ? (Forward ? "z = x + 1, 64 MiB f32, 2 slots, copies forwarded" : "z = x + 1, 64 MiB f32, 2 slots")
                    : "WRONG RESULT");
}

struct EigenGemm {
  RowMatrix a, b, c;
  explicit EigenGemm(I n) : a(n, n), b(n, n), c(n, n) {
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

/// A one-device kernel over N^3 of T in B^3 blocks, grid (i, j, k): A's
/// block (i, k), B's (k, j), C's (i, j) and an f32 B x B scratch go to
/// `body`; `report` receives the pipeline's report when it compiles.
template <class T, I B, I N, class Body>
Executable matmul_pipeline(Body body, PipelineReport& report) {
  return kernel([&report, body](HbmRef<const T, N, N> a, HbmRef<const T, N, N> b, HbmRef<float, N, N> c) {
           report = emit_pipeline(grid(N / B, N / B, N / B), body)(in(a, block<B, B>([](I i, I, I k) {
                                                                        return std::array{i, k};
                                                                      })),
                                                                   in(b, block<B, B>([](I, I j, I k) {
                                                                        return std::array{k, j};
                                                                      })),
                                                                   out(c, block<B, B>([](I i, I j, I) {
                                                                         return std::array{i, j};
                                                                       })),
                                                                   scratch<VmemRef<float, B, B>>());
         })
      .compile(Mesh{{"x", 1}});
}

template <class T, I B, I N = kN>
void BM_PipelinedMatmul(benchmark::State& state) {
  PipelineReport report;
  Executable exe = [&] {
    const auto t0 = Clock::now();
    Executable e = matmul_pipeline<T, B, N>(
        [](VmemRef<const T, B, B> ab, VmemRef<const T, B, B> bb, VmemRef<float, B, B> cb, VmemRef<float, B, B> acc) {
          if (program_id(2) == 0) acc.store(dot<float>(ab.load(), bb.load()));
          else acc += dot<float>(ab.load(), bb.load());
          if (program_id(2) == num_programs(2) - 1) cb.store(acc.load());
        },
        report);
    state.counters["compile_ms"] = std::chrono::duration<double>(Clock::now() - t0).count() * 1e3;
    return e;
  }();
  const auto a = Array::generate<T>(1, Shape{N, N}, [](int, std::int64_t i) { return static_cast<T>(value(i, 1)); });
  const auto b = Array::generate<T>(1, Shape{N, N}, [](int, std::int64_t i) { return static_cast<T>(value(i, 2)); });
  Array c = exe(a, b)[0];
  const std::vector<Array> args{a, b, c};
  const auto call = [&] {
    exe.call_in_place(args);
    c.block_until_ready();
  };
  EigenGemm eigen(N);
  call();
  eigen();
  std::vector<double> seconds, eigen_seconds;
  for (auto _ : state) {
    seconds.push_back(seconds_of(call));
    eigen_seconds.push_back(seconds_of(eigen));
  }
  // Spot check one element against Eigen (same f32 inputs; bf16 holds them exactly).
  const float got = c.to_host<float>(0)[static_cast<std::size_t>(5 * N + 7)], want = eigen.c(5, 7);
  const bool ok = std::abs(got - want) <= 1e-3f * (1.0f + std::abs(want));
  const double med = median(std::move(seconds)), eigen_med = median(std::move(eigen_seconds));
  state.counters["median_ms"] = med * 1e3;
  state.counters["GFLOPs"] = 2.0 * static_cast<double>(N * N * N) / med / 1e9;
  state.counters["eigen_f32_ms"] = eigen_med * 1e3;
  state.counters["speed_vs_eigen"] = eigen_med / med;
  state.counters["steps"] = static_cast<double>(report.steps);
  // Each step's share of the call against Eigen's time for the same FLOPs
  // (one B^3 block product): what a step costs above the arithmetic.
  state.counters["us_per_step"] = med / static_cast<double>(report.steps) * 1e6;
  state.counters["over_eigen_us_per_step"] = (med - eigen_med) / static_cast<double>(report.steps) * 1e6;
  state.SetLabel(!ok ? "WRONG RESULT" : std::is_same_v<T, float> ? "f32 in, f32 acc" : "bf16 in, f32 acc");
}

// BM_PipelineStepCost<T, Evaluated>: the matmul's pipeline (512^3 of T,
// 128^3 blocks, grid 4x4x4, the same operands and scratch) without its
// arithmetic: what a step costs in block copies, their semaphores and the
// ops that start and wait for them. With an empty body the kernel is a static
// communication program and runs bound (docs/runtime.md, "Bound launches");
// Evaluated adds `acc.store(0.0f)` when k starts (a 64 KiB fill every 4
// steps), which sends it through the evaluator and the launch as the
// matmul's body does. Baseline: the same bytes moved by hand on one thread
// (the A and B blocks fetched every step, C written back every 4).
template <class T, bool Evaluated>
void BM_PipelineStepCost(benchmark::State& state) {
  constexpr I N = 512, B = 128;
  PipelineReport report;
  Executable exe = matmul_pipeline<T, B, N>(
      [](VmemRef<const T, B, B>, VmemRef<const T, B, B>, VmemRef<float, B, B>,
         [[maybe_unused]] VmemRef<float, B, B> acc) {
        if constexpr (Evaluated)
          if (program_id(2) == 0) acc.store(0.0f);
      },
      report);
  const auto a = Array::generate<T>(1, Shape{N, N}, [](int, std::int64_t i) { return static_cast<T>(value(i, 1)); });
  const auto b = Array::generate<T>(1, Shape{N, N}, [](int, std::int64_t i) { return static_cast<T>(value(i, 2)); });
  Array c = exe(a, b)[0];
  const std::vector<Array> args{a, b, c};
  const auto call = [&] {
    exe.call_in_place(args);
    c.block_until_ready();
  };
  std::vector<T> ha(static_cast<std::size_t>(N * N)), hb(ha.size()), ab(static_cast<std::size_t>(B * B)), bb(ab.size());
  std::vector<float> hc(static_cast<std::size_t>(N * N)), cb(ab.size());
  const auto copy_block = [](const auto* from, I from_stride, auto* to, I to_stride) {
    for (I r = 0; r < B; ++r) std::memcpy(to + r * to_stride, from + r * from_stride, B * sizeof(*from));
  };
  const auto by_hand = [&] {
    for (I i = 0; i < N / B; ++i)
      for (I j = 0; j < N / B; ++j) {
        for (I k = 0; k < N / B; ++k) {
          copy_block(ha.data() + (i * N + k) * B, N, ab.data(), B);
          copy_block(hb.data() + (k * N + j) * B, N, bb.data(), B);
          benchmark::DoNotOptimize(ab.data());
          benchmark::DoNotOptimize(bb.data());
        }
        copy_block(cb.data(), B, hc.data() + (i * N + j) * B, N);
      }
    benchmark::DoNotOptimize(hc.data());
  };
  call();
  by_hand();
  std::vector<double> seconds, hand_seconds;
  for (auto _ : state) {
    seconds.push_back(seconds_of(call));
    hand_seconds.push_back(seconds_of(by_hand));
  }
  const double med = median(std::move(seconds)), hand_med = median(std::move(hand_seconds));
  const auto steps = static_cast<double>(report.steps);
  state.counters["median_us"] = med * 1e6;
  state.counters["us_per_step"] = med / steps * 1e6;
  state.counters["hand_us_per_step"] = hand_med / steps * 1e6;
  state.counters["speed_vs_hand"] = hand_med / med;
  state.counters["steps"] = steps;
  state.SetLabel(fmt::format("{} blocks, {}", std::is_same_v<T, float> ? "f32" : "bf16",
                             Evaluated ? "acc.store(0) when k starts (evaluated)" : "empty body (bound)"));
}

BENCHMARK_TEMPLATE(BM_PipelinedElementwise, 16)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_TEMPLATE(BM_PipelinedElementwise, 64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_TEMPLATE(BM_PipelinedElementwise, 256)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_TEMPLATE(BM_PipelinedElementwise, 16, true)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_TEMPLATE(BM_PipelinedElementwise, 64, true)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_TEMPLATE(BM_PipelinedElementwise, 256, true)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
// The shape of examples/pipelined_matmul: 512^3 in 128^3 blocks, grid 4x4x4
// (issue 49's row: bf16 >= 0.8x Eigen f32 512^3).
BENCHMARK_TEMPLATE(BM_PipelinedMatmul, float, 128, 512)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(40);
BENCHMARK_TEMPLATE(BM_PipelinedMatmul, bf16, 128, 512)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(40);
BENCHMARK_TEMPLATE(BM_PipelineStepCost, float, false)->UseRealTime()->Unit(benchmark::kMicrosecond)->Iterations(200);
BENCHMARK_TEMPLATE(BM_PipelineStepCost, bf16, false)->UseRealTime()->Unit(benchmark::kMicrosecond)->Iterations(200);
BENCHMARK_TEMPLATE(BM_PipelineStepCost, float, true)->UseRealTime()->Unit(benchmark::kMicrosecond)->Iterations(200);
BENCHMARK_TEMPLATE(BM_PipelineStepCost, bf16, true)->UseRealTime()->Unit(benchmark::kMicrosecond)->Iterations(200);
BENCHMARK_TEMPLATE(BM_PipelinedMatmul, float, 512)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_TEMPLATE(BM_PipelinedMatmul, float, 1024)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_TEMPLATE(BM_PipelinedMatmul, bf16, 512)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_TEMPLATE(BM_PipelinedMatmul, bf16, 1024)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
