// The cost of refx::tune (docs/targets.md, "Tuning"): a sweep of 224
// configurations of the pipelined matmul (bf16, 512 x 512 @ 512 x 1024,
// blocks bm x bk x bn in 7 x 4 x 4 compiled kernels, each with the grid's
// i and j in either order) ranked on v5e, against the same configurations
// compiled and run once each on the threaded runtime, in the same run.
// Counters: per configuration, tune's and the runs', their ratio, and how
// many were feasible (bk = 64 breaks the (8, 128) tiling: 56 infeasible).
//
//   bench_tune

#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <utility>

#include <refx/refx.hpp>
#include <refx/tune.hpp>

namespace {
using namespace refx;
using I = std::int64_t;
using Clock = std::chrono::steady_clock;

constexpr I kM = 512, kK = 512, kN = 1024;

template <I Bm, I Bk, I Bn>
auto matmul(bool ji) {
  const auto rows = [ji](I a, I b) { return ji ? b : a; };
  return kernel(pipeline_kernel<HbmRef<const bf16, kM, kK>, HbmRef<const bf16, kK, kN>, HbmRef<bf16, kM, kN>>(
                    ji ? grid(kN / Bn, kM / Bm, kK / Bk) : grid(kM / Bm, kN / Bn, kK / Bk),
                    [](VmemRef<const bf16, Bm, Bk> ab, VmemRef<const bf16, Bk, Bn> bb, VmemRef<bf16, Bm, Bn> cb,
                       VmemRef<float, Bm, Bn> acc) {
                      if (program_id(2) == 0) acc.store(0.0f);
                      acc += dot<float>(ab.load(), bb.load());
                      if (program_id(2) == num_programs(2) - 1) cb.store(cast<bf16>(acc.load()));
                    },
                    block<Bm, Bk>([=](I a, I b, I k) {
                      return std::array{rows(a, b), k};
                    }),
                    block<Bk, Bn>([=](I a, I b, I k) {
                      return std::array{k, rows(b, a)};
                    }),
                    block<Bm, Bn>([=](I a, I b, I) {
                      return std::array{rows(a, b), rows(b, a)};
                    }),
                    scratch<VmemRef<float, Bm, Bn>>()))
      .name("matmul");
}

constexpr std::array<I, 7> kBm{8, 16, 32, 64, 128, 256, 512};
constexpr std::array<I, 4> kBk{64, 128, 256, 512}, kBn{128, 256, 512, 1024};
using Make = Tunable (*)(bool);
template <std::size_t C>
constexpr std::pair<std::array<I, 3>, Make> entry() {
  constexpr I bm = kBm[C / 16], bk = kBk[C / 4 % 4], bn = kBn[C % 4];
  return {{bm, bk, bn}, [](bool ji) { return Tunable(matmul<bm, bk, bn>(ji), Mesh{{"x", 1}}); }};
}
template <std::size_t... C>
constexpr auto table(std::index_sequence<C...>) {
  return std::array{entry<C>()...};
}
constexpr auto kernels = table(std::make_index_sequence<7 * 4 * 4>{});

Tunable family(const TuneConfig& c) {
  for (const auto& [blocks, make] : kernels)
    if (blocks == std::array{c["bm"], c["bk"], c["bn"]}) return make(c["ji"] != 0);
  throw Error("bench_tune: no such kernel");
}

const std::vector<TuneConfig>& configs() {
  static const std::vector<TuneConfig> c = tune_grid({{"bm", {kBm.begin(), kBm.end()}},
                                                      {"bk", {kBk.begin(), kBk.end()}},
                                                      {"bn", {kBn.begin(), kBn.end()}},
                                                      {"ji", {0, 1}}});
  return c;
}

void BM_TuneSweep(benchmark::State& state) {
  double swept = 0, ran = 0;
  std::size_t feasible = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    const TuneResult r = tune(configs(), family, targets::v5e(), {.progress = TuneOptions::Progress::off});
    const auto t1 = Clock::now();
    feasible = r.feasible_count();
    // The baseline: each feasible configuration compiled and called once on the runtime.
    for (const TuneEntry& e : r.entries) {
      if (!e.feasible) continue;
      const Tunable t = family(e.config);
      const Executable exe = t.compile(targets::v5e());
      const std::vector<Array> args = t.make_args(exe);
      exe.call_in_place(args);
      for (const Array& a : args) a.block_until_ready();
    }
    const auto t2 = Clock::now();
    swept += std::chrono::duration<double>(t1 - t0).count();
    ran += std::chrono::duration<double>(t2 - t1).count();
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["configs"] = static_cast<double>(configs().size());
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["sweep_s"] = swept / n;
  state.counters["per_config_ms"] = swept / n / static_cast<double>(configs().size()) * 1e3;
  state.counters["compile_and_run_s"] = ran / n;
  state.counters["ratio"] = swept / ran;
}
BENCHMARK(BM_TuneSweep)->Iterations(1)->Repetitions(3)->UseRealTime()->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
