// Rolled grids against unrolled ones, in the same run (issue 48, item 2).
//
// BM_TraceCompile/<rolled>/<steps>: trace + compile (verify included) of a
// 1-D pipeline z = x * 2 + 1 over row blocks (1, 128) of a (100000, 128) f32
// array, `steps` steps; unrolled at 1,000 and 10,000 steps, rolled at
// 1,000 and 100,000. Counters: compile_ms (median), graph_ops (ops of the
// graph, nested ones included), rss_MB (resident memory the Executable
// holds after the compile, a bound on its graph's bytes), and
// vs_unrolled_1000 = this compile time / the unrolled 1,000-step one,
// measured in the same iteration (targets: rolled 100,000 < 1 s and < 50 MB).
//
// BM_PerStep: one kernel, z = x * 2 + 1 over (8, 512) f32 blocks of a
// (8192, 512) array (1,024 steps), compiled rolled and unrolled; each
// iteration calls both. Counters: rolled_us_per_step, unrolled_us_per_step
// and rolled_vs_unrolled = rolled median / unrolled median (target <= 1.2).
//
//   cmake --preset release
//   nice -n 15 cmake --build --preset release --target bench_rolled_grid -j2 && build/release/bench/bench_rolled_grid

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <vector>

#include <unistd.h>

#include <refx/refx.hpp>

namespace {
using namespace refx;
using Clock = std::chrono::steady_clock;
using I = std::int64_t;

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

/// Resident memory of this process, in bytes (/proc/self/statm).
double resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

constexpr I kMaxRows = 100000, kCols = 128;

template <class G>
Executable compile_rows(G g) {
  return kernel([g](HbmRef<const float, kMaxRows, kCols> x, HbmRef<float, kMaxRows, kCols> z) {
           const auto rows = [](auto i) { return std::tuple{i, 0}; };
           emit_pipeline(g, [](VmemRef<const float, 1, kCols> xb, VmemRef<float, 1, kCols> zb) {
             zb.store(xb.load() * 2.0f + 1.0f);
           })(in(x, block<1, kCols>(rows)), out(z, block<1, kCols>(rows)));
         })
      .compile(Mesh{{"x", 1}});
}

void BM_TraceCompile(benchmark::State& state) {
  const bool rolled = state.range(0) != 0;
  const I steps = state.range(1);
  std::vector<double> seconds, ratios;
  std::size_t ops = 0;
  double rss = 0;
  bool was_rolled = false;
  for (auto _ : state) {
    const double base = seconds_of([] { benchmark::DoNotOptimize(compile_rows(grid(I{1000}).unrolled())); });
    std::optional<Executable> exe;
    const double before = resident_bytes();
    const double s = seconds_of(
        [&] { exe.emplace(rolled ? compile_rows(grid(steps).rolled()) : compile_rows(grid(steps).unrolled())); });
    rss = std::max(0.0, resident_bytes() - before);
    ops = exe->graph().num_ops();
    was_rolled = exe->pipeline_report().rolled;
    seconds.push_back(s);
    ratios.push_back(s / base);
  }
  state.counters["compile_ms"] = median(seconds) * 1e3;
  state.counters["graph_ops"] = static_cast<double>(ops);
  state.counters["rss_MB"] = rss / 1e6;
  state.counters["vs_unrolled_1000"] = median(ratios);
  state.SetLabel(was_rolled == rolled ? (rolled ? "rolled" : "unrolled") : "WRONG MODE");
}
BENCHMARK(BM_TraceCompile)
    ->Args({0, 1000})
    ->Args({0, 10000})
    ->Args({1, 1000})
    ->Args({1, 100000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

constexpr I kRows = 8192, kWide = 512, kB = 8;

template <class G>
Executable compile_blocks(G g) {
  return kernel([g](HbmRef<const float, kRows, kWide> x, HbmRef<float, kRows, kWide> z) {
           const auto rows = [](auto i) { return std::tuple{i, 0}; };
           emit_pipeline(g, [](VmemRef<const float, kB, kWide> xb, VmemRef<float, kB, kWide> zb) {
             zb.store(xb.load() * 2.0f + 1.0f);
           })(in(x, block<kB, kWide>(rows)), out(z, block<kB, kWide>(rows)));
         })
      .compile(Mesh{{"x", 1}});
}

void BM_PerStep(benchmark::State& state) {
  constexpr I steps = kRows / kB;
  const Executable rolled = compile_blocks(grid(steps).rolled());
  const Executable unrolled = compile_blocks(grid(steps).unrolled());
  const Array x = Array::generate<float>(1, Shape{kRows, kWide}, [](int, std::int64_t i) { return float(i % 251); });
  Array zr = rolled(x)[0], zu = unrolled(x)[0];
  const std::vector<Array> rargs{x, zr}, uargs{x, zu};
  const auto call = [](const Executable& exe, const std::vector<Array>& args) {
    exe.call_in_place(args);
    args[1].block_until_ready();
  };
  std::vector<double> rs, us;
  for (auto _ : state) {
    rs.push_back(seconds_of([&] { call(rolled, rargs); }));
    us.push_back(seconds_of([&] { call(unrolled, uargs); }));
  }
  const bool same =
      zr.to_host<float>(0) == zu.to_host<float>(0) && zr.to_host<float>(0)[4097] == float(4097 % 251) * 2 + 1;
  const double r = median(rs), u = median(us);
  state.counters["rolled_us_per_step"] = r / steps * 1e6;
  state.counters["unrolled_us_per_step"] = u / steps * 1e6;
  state.counters["rolled_vs_unrolled"] = r / u;
  state.SetLabel(same ? "z = x * 2 + 1, 1024 steps of (8, 512) f32" : "WRONG RESULT");
}
BENCHMARK(BM_PerStep)->Unit(benchmark::kMillisecond)->Iterations(30);

}  // namespace

BENCHMARK_MAIN();
