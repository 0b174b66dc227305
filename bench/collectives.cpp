// refx collectives: time per op and bus bandwidth (NCCL convention) for
// all-reduce, all-gather and reduce-scatter, N = 2, 4, 8, 4 KiB .. 64 MiB.
// Sizes follow nccl-tests and ../shared/peers: all-reduce = buffer per
// device; all-gather = gathered result per device; reduce-scatter = input
// per device. bench/run_collectives.sh runs this next to OpenMPI, the
// hand-written thread ring and memcpy in the same session and prints ratios.
//
//   bench_collectives --benchmark_filter=AllReduce/8
//
// Modes: out of place (like MPI: into an output Array allocated once and
// reused by every call, as MPI reuses its recvbuf) and in place (like the
// thread ring).
//
// REFX_BENCH_POOL_BYTES=P (the "cold" column of bench/run_collectives.sh):
// the calls rotate over K = ceil(P / bytes of one call's arrays, all devices)
// sets of arrays, so each call starts from memory the caches lost when P is
// larger than the last-level cache; the peers get the same pool
// (bench/peers-cold.patch). Unset or 0: one set, reused ("warm").
//
// REFX_BENCH_ALGORITHM=ring|direct|one_shot forces an algorithm instead of
// Algorithm::automatic (how automatic's size limits are measured:
// docs/performance.md); a collective that lacks it skips the row.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

namespace {

enum Op { all_reduce = 0, all_gather = 1, reduce_scatter = 2 };

// Scheduling options, for measuring their defaults (docs/performance.md):
// REFX_BENCH_COPY_CHUNK_BYTES, REFX_BENCH_INLINE_COPY_BYTES and
// REFX_BENCH_SINGLE_WORKER_BYTES override the RuntimeOptions of those names,
// REFX_BENCH_WORKERS its `workers` (0: the hardware's).
template <class T>
void from_env(const char* name, T& value, T least = 0) {
  const char* text = std::getenv(name);
  if (text == nullptr) return;
  const std::string_view s(text);
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc{} || end != s.data() + s.size() || value < least) {
    std::fprintf(stderr, "bench_collectives: %s='%s' is not a whole number of at least %llu\n", name, text,
                 static_cast<unsigned long long>(least));
    std::exit(2);
  }
}

refx::Runtime& runtime() {
  static refx::Runtime rt([] {
    refx::RuntimeOptions o;
    from_env("REFX_BENCH_COPY_CHUNK_BYTES", o.copy_chunk_bytes, std::size_t{1});
    from_env("REFX_BENCH_INLINE_COPY_BYTES", o.inline_copy_bytes);
    from_env("REFX_BENCH_SINGLE_WORKER_BYTES", o.single_worker_bytes);
    from_env("REFX_BENCH_WORKERS", o.workers);
    return o;
  }());
  return rt;
}

refx::collectives::Algorithm algorithm() {
  using refx::collectives::Algorithm;
  const char* name = std::getenv("REFX_BENCH_ALGORITHM");
  if (name == nullptr || std::string_view(name) == "automatic") return Algorithm::automatic;
  for (const auto& [text, a] : {std::pair{"ring", Algorithm::ring}, std::pair{"direct", Algorithm::direct},
                                std::pair{"one_shot", Algorithm::one_shot}})
    if (std::string_view(name) == text) return a;
  std::fprintf(stderr, "bench_collectives: REFX_BENCH_ALGORITHM='%s' is not automatic, ring, direct or one_shot\n",
               name);
  std::exit(2);
}

double pool_bytes() {
  const char* text = std::getenv("REFX_BENCH_POOL_BYTES");
  return text == nullptr ? 0.0 : std::atof(text);
}

double bus_factor(Op op, int n) { return op == all_reduce ? 2.0 * (n - 1) / n : static_cast<double>(n - 1) / n; }

void run(benchmark::State& state, Op op) {
  const int n = static_cast<int>(state.range(0));
  const std::int64_t bytes = state.range(1);
  const bool in_place = state.range(2) != 0;
  const std::int64_t count = bytes / 4;
  refx::Mesh mesh{{"x", n}};
  refx::collectives::ProgramOptions o;
  o.in_place = in_place;
  o.algorithm = algorithm();
  std::optional<refx::Executable> made;
  try {
    switch (op) {
      case all_reduce: made = refx::collectives::all_reduce_program<float>(mesh, count, o, runtime()); break;
      case all_gather: made = refx::collectives::all_gather_program<float>(mesh, count / n, o, runtime()); break;
      case reduce_scatter: made = refx::collectives::reduce_scatter_program<float>(mesh, count, o, runtime()); break;
    }
  } catch (const refx::Error& e) {  // an algorithm this collective (or form) does not have
    state.SkipWithError(e.what());
    return;
  }
  const refx::Executable& exe = *made;
  // all-gather: the block, or in place the whole (N, block) result with the block in row d.
  const refx::Shape input = op != all_gather ? refx::Shape{count}
                            : in_place       ? refx::Shape{n, count / n}
                                             : refx::Shape{count / n};
  const auto make_input = [&] {
    return refx::Array::generate<float>(
        n, input, [](int d, std::int64_t i) { return static_cast<float>(d + 1) + static_cast<float>(i % 7); },
        runtime());
  };
  // Out of place, out is allocated once per set and reused, as MPI reuses its recvbuf.
  std::vector<std::vector<refx::Array>> sets;
  const double set_bytes = static_cast<double>(n) * 4.0 *
                           static_cast<double>(input.num_elements() + (in_place           ? 0
                                                                       : op == all_gather ? count
                                                                       : op == all_reduce ? count
                                                                                          : count / n));
  const auto k = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(pool_bytes() / set_bytes)));
  for (std::size_t i = 0; i < k; ++i) {
    refx::Array x = make_input();
    sets.push_back(in_place ? std::vector{x} : std::vector{x, exe(x)[0]});
  }
  std::size_t next = 0;
  auto call = [&] {
    const std::vector<refx::Array>& args = sets[next++ % sets.size()];
    exe.call_in_place(args);
    args.back().block_until_ready();
  };
  for (int i = 0; i < 3; ++i) call();
  // Each call is timed on its own and the median reported, as the peers do
  // (../shared/peers): real_time, the mean, also counts the rare call that
  // lost its core to another thread for a time slice.
  std::vector<double> seconds;
  const auto before = runtime().totals();
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const auto after = runtime().totals();
  const double iters = static_cast<double>(state.iterations());
  const auto mid = seconds.begin() + static_cast<std::ptrdiff_t>(seconds.size() / 2);
  std::nth_element(seconds.begin(), mid, seconds.end());
  state.counters["median_us"] = *mid * 1e6;
  state.counters["busbw_GBps"] = static_cast<double>(bytes) * bus_factor(op, n) / *mid / 1e9;
  state.counters["bytes_copied_per_op"] = static_cast<double>(after.bytes_copied - before.bytes_copied) / iters;
  state.counters["parks_per_op"] = static_cast<double>(after.parks - before.parks) / iters;
  state.counters["pool_sets"] = static_cast<double>(k);
  state.SetLabel(in_place ? "in_place" : "out_of_place");
}

void args(benchmark::internal::Benchmark* b) {
  for (int n : {2, 4, 8})
    for (std::int64_t s : {4LL << 10, 64LL << 10, 1LL << 20, 16LL << 20, 64LL << 20})
      for (int in_place : {0, 1}) b->Args({n, s, in_place});
  b->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(0.2);
}

void BM_AllReduce(benchmark::State& s) { run(s, all_reduce); }
void BM_AllGather(benchmark::State& s) { run(s, all_gather); }
void BM_ReduceScatter(benchmark::State& s) { run(s, reduce_scatter); }

BENCHMARK(BM_AllReduce)->Apply(args);
BENCHMARK(BM_AllGather)->Apply(args);
BENCHMARK(BM_ReduceScatter)->Apply(args);

}  // namespace

BENCHMARK_MAIN();
