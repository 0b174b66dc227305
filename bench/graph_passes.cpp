// The ordered effect graph's passes, measured against baselines in the same
// binary (ratios printed as counters; figures in docs/perf-graph.md):
//   Fused      max(a*x + b*y, 0) over 16 MiB f32 arrays through the reference
//              interpreter (one fused loop) vs a hand-written C++ loop.
//              Counter `ratio` = refx time / hand loop time (target <= 1.3).
//   Passes     trace + verify + schedule of a kernel of ~10k, 100k, 1M ops
//              (loads, stores, elementwise, local copies, semaphores).
//              `Scaling` measures 100k and 1M in one run: `ratio` = t(1M)/t(100k)
//              (target <= 12; 1M under 2 s).
//   PerOp      a chain of 100k dependent scalar adds interpreted, ns per op,
//              vs a oneTBB flow_graph chain of 100k continue_nodes (ns per
//              node). `ratio` = refx ns/op / TBB ns/node (target <= 1.0).
//   Overlap    a 64 MiB remote copy and independent compute (exp over 8 MiB) written after its
//              wait, on the threaded runtime (one device), with the scheduler
//              on and off: `ratio` = scheduled / unscheduled wall time.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <cstdint>
#include <vector>

#include <refx/extend/graph_walk.hpp>
#include <refx/passes/pipeline.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/refx.hpp>

#if REFX_BENCH_HAVE_TBB
#include <oneapi/tbb/flow_graph.h>
#endif

namespace {
using namespace refx;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// CPU time of this thread / of the process: on a shared machine the ratios
// below compare CPU time (what the code costs), and report wall time too.
double thread_cpu() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
double process_cpu() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// ---------------------------------------------------------------- (a) fused

constexpr std::int64_t fused_n = (std::int64_t{16} << 20) / 4;  // 16 MiB of f32 per array

__attribute__((noinline)) void hand_loop(const float* x, const float* y, float* out, std::int64_t n, float a, float b) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = a * x[i] + b * y[i];
    out[i] = v < 0.0f ? 0.0f : v;
  }
}

void BM_Fused(benchmark::State& state) {
  Graph g = trace([](SmemRef<const float> a, SmemRef<const float> b, VmemRef<const float, fused_n> x,
                     VmemRef<const float, fused_n> y,
                     VmemRef<float, fused_n> out) { out.store(max(a.load() * x.load() + b.load() * y.load(), 0.0f)); });
  passes::run_pipeline(g);
  if (refx::extend::count_ops(g, "fused") != 1) state.SkipWithError("expected one fused op");
  Buffer a = Buffer::scalar(2.5f), b = Buffer::scalar(-0.75f);
  Buffer x(DType::f32, Shape{fused_n}), y(DType::f32, Shape{fused_n}), out(DType::f32, Shape{fused_n});
  std::vector<float> hand(static_cast<std::size_t>(fused_n));
  for (std::int64_t i = 0; i < fused_n; ++i) {
    x.data<float>()[i] = static_cast<float>(i % 1000) - 500.0f;
    y.data<float>()[i] = static_cast<float>(i % 777) - 300.0f;
  }
  double t_refx = 0, t_hand = 0, w_refx = 0, w_hand = 0;
  volatile float va = 2.5f, vb = -0.75f;  // the hand loop reads its scalars at run time too
  for (auto _ : state) {
    auto w0 = Clock::now();
    double c0 = thread_cpu();
    interpret(g, a, b, x, y, out);
    t_refx += thread_cpu() - c0;
    w_refx += seconds_since(w0);
    w0 = Clock::now();
    c0 = thread_cpu();
    hand_loop(x.data<float>(), y.data<float>(), hand.data(), fused_n, va, vb);
    t_hand += thread_cpu() - c0;
    w_hand += seconds_since(w0);
    benchmark::DoNotOptimize(hand.data());
  }
  if (std::memcmp(hand.data(), out.data(), out.bytes()) != 0) state.SkipWithError("fused result differs");
  const double it = static_cast<double>(state.iterations());
  state.counters["refx_ms"] = 1e3 * t_refx / it;
  state.counters["hand_ms"] = 1e3 * t_hand / it;
  state.counters["ratio"] = t_refx / t_hand;
  state.counters["wall_ratio"] = w_refx / w_hand;
  state.SetBytesProcessed(state.iterations() * 3 * fused_n * 4);
}
BENCHMARK(BM_Fused)->Unit(benchmark::kMillisecond)->Iterations(20);

// ---------------------------------------------------------------- (b) passes

/// About `ops` ops: per step a load, two arithmetic ops and a store through
/// views; every 8 steps a local copy with its wait and a semaphore round trip.
auto passes_kernel(std::int64_t ops) {
  return [steps = ops / 5](VmemRef<const float, 64, 8> x, VmemRef<float, 64, 8> y, VmemRef<float, 64, 8> z) {
    run_scoped([&](DmaSemaphore dma, RegularSemaphore sem) {
      auto acc = x.at(0).load();
      for (std::int64_t k = 0; k < steps; ++k) {
        const std::int64_t r = k % 64;
        auto v = x.at(r).load();
        acc = acc * v + v;
        y.at(r).store(acc);
        if (k % 8 == 7) {
          auto c = make_async_copy(y.at(r), z.at(r), dma);
          c.start();
          semaphore_signal(sem, 1);
          semaphore_wait(sem, 1);
          c.wait();
        }
      }
    });
  };
}

struct PassTimes {
  double trace = 0, verify = 0, schedule = 0;
  std::size_t ops = 0;
  double total() const { return trace + verify + schedule; }
};

PassTimes trace_verify_schedule(std::int64_t ops, double* wall = nullptr) {
  PassTimes t;
  const auto w0 = Clock::now();
  double t0 = thread_cpu();
  Graph g = trace(passes_kernel(ops));
  t.trace = thread_cpu() - t0;
  t.ops = g.num_ops();
  t0 = thread_cpu();
  passes::verify(g);
  t.verify = thread_cpu() - t0;
  t0 = thread_cpu();
  passes::schedule(g);
  t.schedule = thread_cpu() - t0;
  if (wall != nullptr) *wall += seconds_since(w0);
  return t;
}

void BM_Passes(benchmark::State& state) {
  PassTimes sum;
  double wall = 0;
  for (auto _ : state) {
    const PassTimes t = trace_verify_schedule(state.range(0), &wall);
    sum.trace += t.trace;
    sum.verify += t.verify;
    sum.schedule += t.schedule;
    sum.ops = t.ops;
  }
  const double it = static_cast<double>(state.iterations()), n = static_cast<double>(sum.ops);
  state.counters["ops"] = n;
  state.counters["trace_ns_per_op"] = 1e9 * sum.trace / it / n;
  state.counters["verify_ns_per_op"] = 1e9 * sum.verify / it / n;
  state.counters["schedule_ns_per_op"] = 1e9 * sum.schedule / it / n;
  state.counters["total_s"] = sum.total() / it;
  state.counters["wall_s"] = wall / it;
}
BENCHMARK(BM_Passes)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_PassesScaling(benchmark::State& state) {
  double small = 0, large = 0, wall_small = 0, wall_large = 0;
  for (auto _ : state) {
    small += trace_verify_schedule(100'000, &wall_small).total();
    large += trace_verify_schedule(1'000'000, &wall_large).total();
  }
  const double it = static_cast<double>(state.iterations());
  state.counters["t100k_s"] = small / it;
  state.counters["t1M_s"] = large / it;
  state.counters["ratio"] = large / small;
  state.counters["wall_ratio"] = wall_large / wall_small;
}
BENCHMARK(BM_PassesScaling)->Unit(benchmark::kMillisecond)->Iterations(3);

// ---------------------------------------------------------------- (c) per-op overhead

constexpr std::int64_t chain_ops = 100'000;

void BM_PerOp(benchmark::State& state) {
  Graph g = trace([](SmemRef<const std::int32_t> x, SmemRef<std::int32_t> y) {
    Scalar<std::int32_t> acc = x.load();
    const Scalar<std::int32_t> one = 1;
    for (std::int64_t k = 0; k < chain_ops; ++k) acc = acc + one;
    y.store(acc);
  });
  passes::Options o;
  o.fuse = state.range(0) != 0;  // unfused: the per-op cost of the executor itself
  passes::run_pipeline(g, o);
  Buffer x = Buffer::scalar<std::int32_t>(5), y = Buffer::scalar<std::int32_t>(0);
  double t_refx = 0, w_refx = 0;
  for (auto _ : state) {
    const auto w0 = Clock::now();
    const double t0 = thread_cpu();
    interpret(g, x, y);
    t_refx += thread_cpu() - t0;
    w_refx += seconds_since(w0);
  }
  if (*y.data<std::int32_t>() != 5 + chain_ops) state.SkipWithError("wrong chain result");
  const double refx_ns = 1e9 * t_refx / static_cast<double>(state.iterations()) / chain_ops;
  const double refx_wall_ns = 1e9 * w_refx / static_cast<double>(state.iterations()) / chain_ops;
  state.counters["refx_ns_per_op"] = refx_ns;
  state.counters["refx_wall_ns_per_op"] = refx_wall_ns;
#if REFX_BENCH_HAVE_TBB
  namespace flow = oneapi::tbb::flow;
  flow::graph fg;
  std::vector<std::unique_ptr<flow::continue_node<flow::continue_msg>>> nodes;
  nodes.reserve(chain_ops);
  for (std::int64_t k = 0; k < chain_ops; ++k) {
    nodes.push_back(std::make_unique<flow::continue_node<flow::continue_msg>>(fg, [](const flow::continue_msg&) {}));
    if (k > 0) flow::make_edge(*nodes[static_cast<std::size_t>(k - 1)], *nodes.back());
  }
  double t_tbb = 0, w_tbb = 0;
  const int reps = 10;
  for (int r = 0; r < reps; ++r) {
    const auto w0 = Clock::now();
    const double t0 = process_cpu();  // TBB runs nodes on its worker threads
    nodes.front()->try_put(flow::continue_msg());
    fg.wait_for_all();
    t_tbb += process_cpu() - t0;
    w_tbb += seconds_since(w0);
  }
  const double tbb_ns = 1e9 * t_tbb / reps / chain_ops;
  const double tbb_wall_ns = 1e9 * w_tbb / reps / chain_ops;
  state.counters["tbb_ns_per_node"] = tbb_ns;
  state.counters["ratio"] = refx_ns / tbb_ns;
  state.counters["wall_ratio"] = refx_wall_ns / tbb_wall_ns;
#endif
}
BENCHMARK(BM_PerOp)->Arg(0)->Arg(1)->ArgName("fuse")->Unit(benchmark::kMillisecond)->Iterations(20);

// ---------------------------------------------------------------- (d) overlap

constexpr std::int64_t copy_n = (std::int64_t{64} << 20) / 4;  // 64 MiB
constexpr std::int64_t work_n = (std::int64_t{8} << 20) / 4;   // 8 MiB of exp

void BM_Overlap(benchmark::State& state) {
  const auto body = [](HbmRef<const float, copy_n> x, VmemRef<const float, work_n> a, HbmRef<float, copy_n> y,
                       VmemRef<float, work_n> b) {
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, 0);
      c.start();
      c.wait();
      b.store(exp(a.load()) * 0.5f + 1.0f);  // independent of the copy
    });
  };
  passes::Options on, off;
  off.schedule = false;
  const Mesh one{{"x", 1}};
  auto scheduled = kernel(body).passes(on).compile(one);
  auto unscheduled = kernel(body).passes(off).compile(one);
  auto x = Array::generate<float>(1, Shape{copy_n}, [](int, std::int64_t i) { return float(i % 100); });
  auto a = Array::generate<float>(1, Shape{work_n}, [](int, std::int64_t i) { return float(i % 10) * 0.1f; });
  // Outputs allocated once: fresh 64 MiB per call would time page faults, not the schedule.
  auto y = Array::empty(1, DType::f32, Shape{copy_n}), b = Array::empty(1, DType::f32, Shape{work_n});
  const auto run = [&](const Executable& e) {
    const auto t0 = Clock::now();
    e.call_in_place({x, a, y, b});
    y.block_until_ready();
    b.block_until_ready();
    return seconds_since(t0);
  };
  run(unscheduled);
  run(scheduled);
  double t_on = 0, t_off = 0;
  for (auto _ : state) {
    t_off += run(unscheduled);
    t_on += run(scheduled);
  }
  const double it = static_cast<double>(state.iterations());
  state.counters["scheduled_ms"] = 1e3 * t_on / it;
  state.counters["unscheduled_ms"] = 1e3 * t_off / it;
  state.counters["ratio"] = t_on / t_off;
}
BENCHMARK(BM_Overlap)->Unit(benchmark::kMillisecond)->Iterations(30);

}  // namespace

BENCHMARK_MAIN();
