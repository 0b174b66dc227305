// Small kernels against hand-written loops (issue 23, item 4): a kernel
// should cost what it computes. Each row runs a one-device refx kernel over
// Vmem Refs (call + wait on the result: dispatch, run and host wait) and a
// plain loop over the same input buffers, alternately in every iteration,
// so both see the same caches and machine load.
//
// BM_Reduce/<op>/<axis>: reduce_sum (op 0) or reduce_max (op 1) of a
//   1024 x 1024 f32 block along axis 0 (rows combine elementwise) or axis 1
//   (contiguous; the baseline keeps 32 partial sums, as refx does).
// BM_Elementwise/<n>/<map>: max(x*2 + y*3, 0) over n f32, written with Value
//   operators (map 0: four ops the fusion pass joins) or as one refx::map
//   (map 1: one compiled element function).
// BM_Broadcast/<n>/<row>: (x - m) * 2 over a 128 x 256 (n 256) or 1024 x
//   1024 block, m <M, 1> (row 0) or <1, N> (row 1) broadcast in the fused
//   loop, against the same kernel given m pre-broadcast to <M, N> (base).
// BM_Math/<n>/<map>: y = exp(x) * tanh(x) over n f32 (issue 47), with Value
//   operators (map 0: exp, tanh and mul fused into one loop) or one generic
//   refx::map (map 1: called per 512-element tile with MapTile operands),
//   against the Eigen array expression `x.exp() * x.tanh()` (one pass with
//   Eigen's packet math; the refx kernels use the same packet functions,
//   with IEEE edge cases corrected).
// Counters (medians over the iterations): refx_us, base_us,
// ratio = refx_us / base_us; for reduce_max also exact_us and ratio_exact
// against a loop that propagates a NaN as refx must (the plain loop's
// `a < b ? b : a` drops one: a different, cheaper answer). The reported (manual) time is refx's.
//
// Run: cmake -S . -B build/rel -G Ninja -DCMAKE_BUILD_TYPE=Release &&
//      cmake --build build/rel --target bench_kernels && build/rel/bench/bench_kernels

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include <refx/refx.hpp>

namespace {
using namespace refx;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kN = 1024;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// Calls `exe` on `args` and waits for its first output (the refx side of a row).
template <class... A>
void call_and_wait(const Executable& exe, const A&... args) {
  std::vector<Array> r = exe(args...);
  r[0].block_until_ready();
  benchmark::DoNotOptimize(r[0].shard(0).data());
}

/// Times `refx_call` (returns the output Array, which it waits for) and
/// `base` alternately; reports the medians and their ratio. With `exact`, a
/// second baseline computing exactly refx's result (reduce_max: a NaN
/// propagates, as in jnp.max), reported as exact_us and ratio_exact.
template <class R, class B>
void compare(benchmark::State& state, R&& refx_call, B&& base, const std::function<void()>& exact = {}) {
  for (int w = 0; w < 3; ++w) {  // warm up: first-touch pages, the worker pool
    refx_call();
    base();
    if (exact) exact();
  }
  std::vector<double> tr, tb, te;
  for (auto _ : state) {
    auto t0 = Clock::now();
    refx_call();
    const double r = seconds_since(t0);
    t0 = Clock::now();
    base();
    const double b = seconds_since(t0);
    if (exact) {
      t0 = Clock::now();
      exact();
      te.push_back(seconds_since(t0));
    }
    state.SetIterationTime(r);
    tr.push_back(r);
    tb.push_back(b);
  }
  const double mr = median(tr), mb = median(tb);
  state.counters["refx_us"] = mr * 1e6;
  state.counters["base_us"] = mb * 1e6;
  state.counters["ratio"] = mr / mb;
  if (exact) {
    state.counters["exact_us"] = median(te) * 1e6;
    state.counters["ratio_exact"] = mr / median(te);
  }
}

template <int Op, int Axis>
Executable reduce_kernel() {
  return kernel([](VmemRef<const float, kN, kN> x, VmemRef<float, kN> y) {
           if constexpr (Op == 0) y.store(reduce_sum<Axis>(x.load()));
           else y.store(reduce_max<Axis>(x.load()));
         })
      .name("reduce")
      .compile(Mesh{{"x", 1}});
}

/// Op 0: a + b. Op 1: the maximum as a plain loop writes it, which drops a
/// NaN b; Op 2: the maximum with a NaN propagating, refx's (XLA's) result.
template <int Op>
float combine(float a, float b) {
  if constexpr (Op == 0) return a + b;
  else if constexpr (Op == 1) return a < b ? b : a;
  else return (a < b) | (b != b) ? b : a;
}

/// The hand-written reduction of a row-major n x n matrix along `axis`.
template <int Op>
void reduce_loop(const float* x, float* y, int axis) {
  const float init = Op == 0 ? 0.0f : -std::numeric_limits<float>::infinity();
  if (axis == 0) {
    std::fill_n(y, kN, init);
    for (std::int64_t i = 0; i < kN; ++i)
      for (std::int64_t j = 0; j < kN; ++j) y[j] = combine<Op>(y[j], x[i * kN + j]);
    return;
  }
  // 32 accumulators: with 8, GCC 12 keeps the adds scalar (6x slower).
  constexpr int lanes = 32;
  for (std::int64_t i = 0; i < kN; ++i) {
    const float* row = x + i * kN;
    float acc[lanes];
    std::fill_n(acc, lanes, init);
    for (std::int64_t k = 0; k < kN; k += lanes)
      for (int l = 0; l < lanes; ++l) acc[l] = combine<Op>(acc[l], row[k + l]);
    float s = acc[0];
    for (int l = 1; l < lanes; ++l) s = combine<Op>(s, acc[l]);
    y[i] = s;
  }
}

void BM_Reduce(benchmark::State& state) {
  const int op = static_cast<int>(state.range(0)), axis = static_cast<int>(state.range(1));
  Executable exe = op == 0 ? (axis == 0 ? reduce_kernel<0, 0>() : reduce_kernel<0, 1>())
                           : (axis == 0 ? reduce_kernel<1, 0>() : reduce_kernel<1, 1>());
  const Array x = Array::generate<float>(1, Shape{kN, kN}, [](int, std::int64_t i) { return float(i % 1013) * 0.25f; });
  const float* px = x.shard(0).data<float>();
  std::vector<float> out(kN), exact_out(kN);
  compare(
      state,
      [&] { call_and_wait(exe, x); },
      [&] {
        if (op == 0) reduce_loop<0>(px, out.data(), axis);
        else reduce_loop<1>(px, out.data(), axis);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
      },
      op == 0 ? std::function<void()>{} : [&] {
        reduce_loop<2>(px, exact_out.data(), axis);
        benchmark::DoNotOptimize(exact_out.data());
        benchmark::ClobberMemory();
      });
  // The two must agree (to rounding: the sums' orders may differ).
  const std::vector<float> got = exe(x)[0].to_host<float>(0);
  for (std::int64_t i = 0; i < kN; ++i)
    if (std::abs(got[static_cast<std::size_t>(i)] - out[static_cast<std::size_t>(i)]) >
        1e-5f * std::max(1.0f, std::abs(out[static_cast<std::size_t>(i)])))
      state.SkipWithError("refx and the baseline disagree");
  state.SetLabel(fmt::format("{}<{}> f32 1024x1024", op == 0 ? "reduce_sum" : "reduce_max", axis));
}
BENCHMARK(BM_Reduce)
    ->ArgNames({"op", "axis"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.3);

template <std::int64_t N>
Executable elementwise_kernel() {
  return kernel([](VmemRef<const float, N> x, VmemRef<const float, N> y, VmemRef<float, N> z) {
           z.store(max(x.load() * 2.0f + y.load() * 3.0f, 0.0f));
         })
      .name("elementwise")
      .compile(Mesh{{"x", 1}});
}

/// The same kernel with its element function as one refx::map.
template <std::int64_t N>
Executable elementwise_map_kernel() {
  return kernel([](VmemRef<const float, N> x, VmemRef<const float, N> y, VmemRef<float, N> z) {
           z.store(map([](float a, float b) { return std::max(a * 2.0f + b * 3.0f, 0.0f); }, x.load(), y.load()));
         })
      .name("elementwise_map")
      .compile(Mesh{{"x", 1}});
}

void BM_Elementwise(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const bool use_map = state.range(1) != 0;
  Executable exe = use_map ? (n == 65536 ? elementwise_map_kernel<65536>() : elementwise_map_kernel<4194304>())
                           : (n == 65536 ? elementwise_kernel<65536>() : elementwise_kernel<4194304>());
  const Array x = Array::generate<float>(1, Shape{n}, [](int, std::int64_t i) { return float(i % 97) - 40.0f; });
  const Array y = Array::generate<float>(1, Shape{n}, [](int, std::int64_t i) { return float(i % 31) - 12.0f; });
  const float* px = x.shard(0).data<float>();
  const float* py = y.shard(0).data<float>();
  std::vector<float> out(static_cast<std::size_t>(n));
  compare(
      state, [&] { call_and_wait(exe, x, y); },
      [&] {
        float* o = out.data();
        for (std::int64_t i = 0; i < n; ++i) o[i] = std::max(px[i] * 2.0f + py[i] * 3.0f, 0.0f);
        benchmark::DoNotOptimize(o);
        benchmark::ClobberMemory();
      });
  if (exe(x, y)[0].to_host<float>(0) != out) state.SkipWithError("refx and the baseline disagree");
  state.SetLabel(fmt::format("{}, {} f32", use_map ? "map: max(x*2 + y*3, 0)" : "max(x*2 + y*3, 0)", n));
}
BENCHMARK(BM_Elementwise)
    ->ArgNames({"n", "map"})
    ->ArgsProduct({{65536, 4194304}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.3);

/// (x - m) * 2 over an M x N f32 block with m broadcast from <M, 1> (a row
/// statistic, as softmax subtracts its row maxima) or <1, N> (a bias row),
/// or, as the baseline, the same with m already broadcast to <M, N>.
template <std::int64_t M, std::int64_t N, std::int64_t MR, std::int64_t MC>
Executable broadcast_kernel() {
  return kernel([](VmemRef<const float, M, N> x, VmemRef<const float, MR, MC> m, VmemRef<float, M, N> z) {
           z.store((x.load() - m.load()) * 2.0f);
         })
      .name("broadcast")
      .compile(Mesh{{"x", 1}});
}

template <std::int64_t M, std::int64_t N>
void broadcast_row(benchmark::State& state, bool rows) {
  Executable stretched = rows ? broadcast_kernel<M, N, M, 1>() : broadcast_kernel<M, N, 1, N>();
  Executable full = broadcast_kernel<M, N, M, N>();
  const Array x = Array::generate<float>(1, Shape{M, N}, [](int, std::int64_t i) { return float(i % 97) - 40.0f; });
  const Array m = rows ? Array::generate<float>(1, Shape{M, 1}, [](int, std::int64_t i) { return float(i % 13); })
                       : Array::generate<float>(1, Shape{1, N}, [](int, std::int64_t i) { return float(i % 13); });
  const Array mf =
      Array::generate<float>(1, Shape{M, N}, [&](int, std::int64_t i) { return float((rows ? i / N : i % N) % 13); });
  compare(
      state, [&] { call_and_wait(stretched, x, m); }, [&] { call_and_wait(full, x, mf); });
  if (stretched(x, m)[0].to_host<float>(0) != full(x, mf)[0].to_host<float>(0))
    state.SkipWithError("the broadcast and the pre-broadcast kernels disagree");
  state.SetLabel(fmt::format("(x - m) * 2, x {}x{} f32, m <{}> against m pre-broadcast (base)", M, N,
                             rows ? fmt::format("{}, 1", M) : fmt::format("1, {}", N)));
}

void BM_Broadcast(benchmark::State& state) {
  const bool rows = state.range(1) == 0;
  if (state.range(0) == 256) broadcast_row<128, 256>(state, rows);
  else broadcast_row<1024, 1024>(state, rows);
}
BENCHMARK(BM_Broadcast)
    ->ArgNames({"n", "row"})
    ->ArgsProduct({{256, 1024}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.3);

template <std::int64_t N, bool UseMap>
Executable math_kernel() {
  return kernel([](VmemRef<const float, N> x, VmemRef<float, N> y) {
           if constexpr (UseMap) y.store(map([](auto v) { return exp(v) * tanh(v); }, x.load()));
           else y.store(exp(x.load()) * tanh(x.load()));
         })
      .name("math")
      .compile(Mesh{{"x", 1}});
}

void BM_Math(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const bool use_map = state.range(1) != 0;
  Executable exe = use_map ? (n == 65536 ? math_kernel<65536, true>() : math_kernel<4194304, true>())
                           : (n == 65536 ? math_kernel<65536, false>() : math_kernel<4194304, false>());
  const Array x =
      Array::generate<float>(1, Shape{n}, [](int, std::int64_t i) { return float(i % 1999) * 0.01f - 10.0f; });
  const float* px = x.shard(0).data<float>();
  std::vector<float> out(static_cast<std::size_t>(n));
  compare(
      state, [&] { call_and_wait(exe, x); },
      [&] {
        const Eigen::Map<const Eigen::ArrayXf> a(px, n);
        Eigen::Map<Eigen::ArrayXf>(out.data(), n) = a.exp() * a.tanh();
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
      });
  const std::vector<float> got = exe(x)[0].to_host<float>(0);
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::abs(got[i] - out[i]) > 1e-5f * std::max(1.0f, std::abs(out[i])))
      state.SkipWithError("refx and the baseline disagree");
  state.SetLabel(fmt::format("{}, {} f32", use_map ? "map: exp(x) * tanh(x)" : "exp(x) * tanh(x)", n));
}
BENCHMARK(BM_Math)
    ->ArgNames({"n", "map"})
    ->ArgsProduct({{65536, 4194304}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.3);

}  // namespace

BENCHMARK_MAIN();
