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
// REFX_BENCH_ALGORITHM=ring|direct|one_shot|ring_direct forces an algorithm instead of
// Algorithm::automatic (how automatic's size limits were measured:
// docs/notes/performance-history.md); a collective that lacks it skips the row.

#include <benchmark/benchmark.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

namespace {

enum Op { all_reduce = 0, all_gather = 1, reduce_scatter = 2 };

// Scheduling options, for measuring their defaults
// (docs/notes/performance-history.md):
// REFX_BENCH_COPY_CHUNK_BYTES, REFX_BENCH_INLINE_COPY_BYTES,
// REFX_BENCH_SINGLE_WORKER_BYTES and REFX_BENCH_BOUND_LAUNCH_BYTES override
// the RuntimeOptions of those names,
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
    from_env("REFX_BENCH_BOUND_LAUNCH_BYTES", o.bound_launch_bytes);
    from_env("REFX_BENCH_WORKERS", o.workers);
    return o;
  }());
  return rt;
}

refx::collectives::Algorithm algorithm() {
  using refx::collectives::Algorithm;
  const char* name = std::getenv("REFX_BENCH_ALGORITHM");
  if (name == nullptr) return Algorithm::automatic;
  constexpr Algorithm all[] = {Algorithm::automatic, Algorithm::ring, Algorithm::direct, Algorithm::one_shot,
                               Algorithm::ring_direct};
  std::string names;
  for (Algorithm a : all) {
    if (name == refx::collectives::algorithm_name(a)) return a;
    names += (names.empty() ? "" : ", ") + std::string(refx::collectives::algorithm_name(a));
  }
  std::fprintf(stderr, "bench_collectives: REFX_BENCH_ALGORITHM='%s' is not one of %s\n", name, names.c_str());
  std::exit(2);
}

double pool_bytes() {
  const char* text = std::getenv("REFX_BENCH_POOL_BYTES");
  return text == nullptr ? 0.0 : std::atof(text);
}

using Clock = std::chrono::steady_clock;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double median(std::vector<double> v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// The benchmarks' inputs: device d's element i is d + 1 + i % 7.
refx::Array input_array(int n, const refx::Shape& shape) {
  return refx::Array::generate<float>(
      n, shape, [](int d, std::int64_t i) { return static_cast<float>(d + 1) + static_cast<float>(i % 7); }, runtime());
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
  // Out of place, out is allocated once per set and reused, as MPI reuses its recvbuf.
  std::vector<std::vector<refx::Array>> sets;
  const double set_bytes = static_cast<double>(n) * 4.0 *
                           static_cast<double>(input.num_elements() + (in_place           ? 0
                                                                       : op == all_gather ? count
                                                                       : op == all_reduce ? count
                                                                                          : count / n));
  const auto k = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(pool_bytes() / set_bytes)));
  for (std::size_t i = 0; i < k; ++i) {
    refx::Array x = input_array(n, input);
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
    const auto t0 = Clock::now();
    call();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  const auto after = runtime().totals();
  const double iters = static_cast<double>(state.iterations());
  const double mid = median(std::move(seconds));
  state.counters["median_us"] = mid * 1e6;
  state.counters["busbw_GBps"] = static_cast<double>(bytes) * bus_factor(op, n) / mid / 1e9;
  state.counters["bytes_copied_per_op"] = static_cast<double>(after.bytes_copied - before.bytes_copied) / iters;
  state.counters["parks_per_op"] = static_cast<double>(after.parks - before.parks) / iters;
  state.counters["bound_per_op"] = static_cast<double>(after.bound - before.bound) / iters;
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

// BM_DispatchFloor/<N>/<bytes>: how close a launch per call can come to the
// thread ring (issue 27): the in-place all-gather, seven ways, interleaved in
// one process (rounds of blocks, one block per way, so a slow phase of the
// machine hits all alike):
//
//   ring        N persistent threads (the calling thread is rank 0), as
//               ../shared/peers/src/ring_threads.cpp runs and times it:
//               barrier, then the op (a copy and a barrier per step), timed
//               from the first barrier's end.
//   ring_timed  the ring again, with rank 0's copies timed too (two clock
//               reads per step, kept out of `ring`): ring_copy_us, their
//               median, is the copy alone; the rest of a ring op is its
//               barrier.
//   handed      the same copies and barriers, but every op is handed to the
//               N - 1 other threads by the calling thread, which runs rank 0
//               and waits for the others to finish: the least a runtime whose
//               calls come from a host thread must do. Timed from the
//               hand-off to the end of the wait.
//   handed_idle the same with one more thread polling with sched_yield, as an
//               idle pool worker does (the third thread of refx's pool of two
//               workers and a helping host thread, on two cores).
//   refx        Executable::call_in_place of all_gather_program, in place,
//               then block_until_ready, on this file's runtime() (its
//               REFX_BENCH_* options apply).
//   refx_async  the same calls dispatched ten at a time, then one
//               block_until_ready: the time per call when the host's
//               dispatch and wait overlap the launches (asynchronous
//               dispatch, as a JAX loop runs).
//   refx_cold   the refx calls, each after the calling thread wrote 2 MiB
//               of other memory (untimed): its L2 (512 KiB per core here)
//               then holds none of what the launch touches, as after a
//               launch whose copies moved that much.
//
// Each reports the median time per op; ratio_* is the ring's median over the
// way's (1.0: as fast as the ring; higher is faster), as
// bench/run_collectives.sh reports refx against the peers.
//
//   bench_collectives --benchmark_filter='BM_DispatchFloor/2/1048576'

// A sense-reversing barrier whose waiters yield, as the peers' "yield" ring.
struct alignas(64) SpinBarrier {
  explicit SpinBarrier(int n) : n(n) {}
  void wait(int& local_sense) {
    local_sense ^= 1;
    if (count.fetch_add(1, std::memory_order_acq_rel) == n - 1) {
      count.store(0, std::memory_order_relaxed);
      sense.store(local_sense, std::memory_order_release);
    } else {
      while (sense.load(std::memory_order_acquire) != local_sense) sched_yield();
    }
  }
  std::atomic<int> count{0};
  alignas(64) std::atomic<int> sense{0};
  const int n;
};

// N buffers of `bytes`, one per rank, each first touched by its rank.
struct Ring {
  Ring(int n, std::size_t bytes)
      : n(n), chunk(bytes / static_cast<std::size_t>(n)), data(static_cast<std::size_t>(n)) {}
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() {
    for (char* p : data) std::free(p);
  }
  // Rank r allocates and fills its own buffer (once).
  void touch(int r) {
    char* p = static_cast<char*>(std::aligned_alloc(64, chunk * static_cast<std::size_t>(n)));
    std::memset(p, r + 1, chunk * static_cast<std::size_t>(n));
    data[static_cast<std::size_t>(r)] = p;
  }
  // Rank r's part of the in-place ring all-gather: N - 1 steps, each a copy
  // of one chunk from the left neighbour and a barrier; `copies`, if given,
  // receives the time of each copy.
  void all_gather(int r, SpinBarrier& b, int& sense, std::vector<double>* copies = nullptr) {
    const int left = (r - 1 + n) % n;
    for (int s = 0; s < n - 1; ++s) {
      const auto c = static_cast<std::size_t>(((r - s - 1) % n + n) % n);
      const Clock::time_point t0 = copies ? Clock::now() : Clock::time_point{};
      std::memcpy(data[static_cast<std::size_t>(r)] + c * chunk, data[static_cast<std::size_t>(left)] + c * chunk,
                  chunk);
      if (copies) copies->push_back(micros(Clock::now() - t0));
      b.wait(sense);
    }
  }
  const int n;
  const std::size_t chunk;
  std::vector<char*> data;
};

// `ops` ops of the thread ring; the per-op times of rank 0 (and, into
// `copies`, the times of its copies).
std::vector<double> ring_block(Ring& ring, int ops, std::vector<double>* copies = nullptr) {
  SpinBarrier b(ring.n);
  std::vector<double> t;
  if (copies) copies->reserve(copies->size() + static_cast<std::size_t>(ops * (ring.n - 1)));
  auto rank = [&](int r) {
    int sense = 0;
    for (int i = 0; i < ops; ++i) {
      b.wait(sense);
      const auto t0 = Clock::now();
      ring.all_gather(r, b, sense, r == 0 ? copies : nullptr);
      if (r == 0) t.push_back(micros(Clock::now() - t0));
    }
  };
  std::vector<std::thread> others;
  for (int r = 1; r < ring.n; ++r) others.emplace_back(rank, r);
  rank(0);
  for (auto& th : others) th.join();
  return t;
}

// `ops` ops handed by the calling thread (rank 0) to the others, each
// polling for the next op with sched_yield; `idle`: plus a thread that only
// polls.
std::vector<double> handed_block(Ring& ring, int ops, bool idle) {
  SpinBarrier b(ring.n);
  std::atomic<int> go{0}, done{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> others;
  for (int r = 1; r < ring.n; ++r)
    others.emplace_back([&, r] {
      int sense = 0;
      for (int i = 1; i <= ops; ++i) {
        while (go.load(std::memory_order_acquire) < i) sched_yield();
        ring.all_gather(r, b, sense);
        done.fetch_add(1, std::memory_order_acq_rel);
      }
    });
  if (idle)
    others.emplace_back([&] {
      while (!stop.load(std::memory_order_acquire)) sched_yield();
    });
  std::vector<double> t;
  int sense = 0;
  for (int i = 1; i <= ops; ++i) {
    const auto t0 = Clock::now();
    go.store(i, std::memory_order_release);
    ring.all_gather(0, b, sense);
    while (done.load(std::memory_order_acquire) < i * (ring.n - 1)) sched_yield();
    t.push_back(micros(Clock::now() - t0));
  }
  stop.store(true, std::memory_order_release);
  for (auto& th : others) th.join();
  return t;
}

void BM_DispatchFloor(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto bytes = static_cast<std::size_t>(state.range(1));
  const std::int64_t block = static_cast<std::int64_t>(bytes) / 4 / n;
  const refx::Mesh mesh{{"x", n}};
  refx::collectives::ProgramOptions o;
  o.in_place = true;
  const refx::Executable exe = refx::collectives::all_gather_program<float>(mesh, block, o, runtime());
  const refx::Array x = input_array(n, refx::Shape{n, block});
  const std::vector<refx::Array> args{x};
  // `ops` calls, `batch` dispatched at a time before one wait; the time per
  // call. `cold`: each call after writing 2 MiB of other memory.
  std::vector<char> other(std::size_t{2} << 20);
  const auto refx_block = [&](int ops, int batch, bool cold = false) {
    std::vector<double> t;
    for (int i = 0; i < ops; i += batch) {
      if (cold) {
        std::memset(other.data(), i, other.size());
        benchmark::ClobberMemory();
      }
      const auto t0 = Clock::now();
      for (int j = 0; j < batch; ++j) exe.call_in_place(args);
      x.block_until_ready();
      t.push_back(micros(Clock::now() - t0) / batch);
    }
    // The pool's workers poll for a while after a call: let them sleep
    // before the hand-written threads run.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return t;
  };
  Ring ring(n, bytes);
  {
    std::vector<std::thread> touch;
    for (int r = 1; r < n; ++r) touch.emplace_back([&, r] { ring.touch(r); });
    ring.touch(0);
    for (auto& th : touch) th.join();
  }
  // Ops per block: about 20 ms of the ring, at least 20.
  refx_block(3, 1);
  const std::vector<double> probe = ring_block(ring, 20);
  const int ops = std::max(20, static_cast<int>(20'000.0 / std::max(median(probe), 0.1)));
  struct Way {
    const char* name;
    std::function<std::vector<double>()> run;
    std::vector<double> times{};  // of every round
  };
  std::vector<double> ring_copies;
  Way ways[] = {
      {"ring", [&] { return ring_block(ring, ops); }},
      {"ring_timed", [&] { return ring_block(ring, ops, &ring_copies); }},
      {"handed", [&] { return handed_block(ring, ops, false); }},
      {"handed_idle", [&] { return handed_block(ring, ops, true); }},
      {"refx", [&] { return refx_block(ops, 1); }},
      {"refx_async", [&] { return refx_block(ops, 10); }},
      {"refx_cold", [&] { return refx_block(ops, 1, true); }},
  };
  for (auto _ : state)
    for (Way& w : ways) {
      const std::vector<double> t = w.run();
      w.times.insert(w.times.end(), t.begin(), t.end());
    }
  const double ring_us = median(ways[0].times);
  for (const Way& w : ways) {
    const double us = median(w.times);
    state.counters[std::string(w.name) + "_us"] = us;
    if (&w != &ways[0]) state.counters[std::string("ratio_") + w.name] = ring_us / us;
  }
  state.counters["ring_copy_us"] = median(ring_copies);
}

// The all-reduce's two all-gather phases after the ring reduce-scatter:
// Algorithm::ring (N-1 neighbour steps) against Algorithm::ring_direct (one
// round to all), as two executables in one process, their calls in
// alternating blocks of ten, each call timed. Both must give the same bits
// first. ring_us and ring_direct_us are the medians, ratio is ring over
// ring_direct (above 1: ring_direct is faster). How automatic's choice of
// ring_direct was measured: docs/notes/performance-history.md (0786798,
// 881461e).
//
//   bench_collectives --benchmark_filter='BM_RingAllGatherPhase/8/1048576/1'
void BM_RingAllGatherPhase(benchmark::State& state) {
  using refx::collectives::Algorithm;
  const int n = static_cast<int>(state.range(0));
  const std::int64_t count = state.range(1) / 4;
  const bool in_place = state.range(2) != 0;
  const refx::Mesh mesh{{"x", n}};
  const auto make = [&](Algorithm a) {
    refx::collectives::ProgramOptions o;
    o.in_place = in_place;
    o.algorithm = a;
    return refx::collectives::all_reduce_program<float>(mesh, count, o, runtime());
  };
  struct Way {
    const char* name;
    refx::Executable exe;
    std::vector<refx::Array> args;
    std::vector<double> times;
  };
  Way ways[] = {{"ring", make(Algorithm::ring), {}, {}}, {"ring_direct", make(Algorithm::ring_direct), {}, {}}};
  for (Way& w : ways) {
    w.args = {input_array(n, refx::Shape{count})};
    if (!in_place) w.args.push_back(w.exe(w.args[0])[0]);
    w.exe.call_in_place(w.args);
  }
  for (int d = 0; d < n; ++d)
    if (ways[0].args.back().to_host<float>(d) != ways[1].args.back().to_host<float>(d)) {
      state.SkipWithError("ring and ring_direct differ");
      return;
    }
  for (auto _ : state)
    for (int block = 0; block < 20; ++block)
      for (Way& w : ways)
        for (int i = 0; i < 10; ++i) {
          const auto t0 = Clock::now();
          w.exe.call_in_place(w.args);
          w.args.back().block_until_ready();
          w.times.push_back(micros(Clock::now() - t0));
        }
  for (const Way& w : ways) state.counters[std::string(w.name) + "_us"] = median(w.times);
  state.counters["ratio"] = median(ways[0].times) / median(ways[1].times);
}

BENCHMARK(BM_AllReduce)->Apply(args);
BENCHMARK(BM_AllGather)->Apply(args);
BENCHMARK(BM_ReduceScatter)->Apply(args);
BENCHMARK(BM_DispatchFloor)
    ->Args({2, 4 << 10})
    ->Args({2, 64 << 10})
    ->Args({2, 256 << 10})
    ->Args({2, 512 << 10})
    ->Args({2, 1 << 20})
    ->Args({2, 2 << 20})
    ->Args({2, 4 << 20})
    ->Args({2, 16 << 20})
    ->Args({8, 1 << 20})
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RingAllGatherPhase)
    ->ArgsProduct({{2, 4, 8}, {1 << 20, 16 << 20}, {0, 1}})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
