// Tuning the canonical Pallas TPU matmul's block sizes without a TPU
// (docs/targets.md, "Tuning"): every (bm, bk, bn) is traced and checked on
// the CPU against a generation's rules, the feasible ones are predicted and
// ranked, and the infeasible ones say which rule they break and by how much.
//
// C = A @ B, bf16, 512 x 1024 @ 1024 x 512, an f32 accumulator in Vmem
// scratch (examples/pipelined_matmul.cpp). Ranked on v5e and on TPU7x; then
// the configurations that fit v6e and not TPU7x (TPU7x tiles 16-bit blocks
// (16, 128), so an 8-row bf16 block is refused), and the best one's
// prediction explained. Writes the v5e ranking to tune_matmul.csv, with a
// measured_seconds column to fill in on a TPU and read back.
// Exits non-zero when a ranking is not what the model must give.

#include <array>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include <refx/refx.hpp>
#include <refx/tune.hpp>

namespace {
using namespace refx;
using I = std::int64_t;

constexpr I kM = 512, kK = 1024, kN = 512;

template <I Bm, I Bk, I Bn>
Tunable matmul() {
  const auto k = pipeline_kernel<HbmRef<const bf16, kM, kK>, HbmRef<const bf16, kK, kN>, HbmRef<bf16, kM, kN>>(
      grid(kM / Bm, kN / Bn, kK / Bk),
      [](VmemRef<const bf16, Bm, Bk> ab, VmemRef<const bf16, Bk, Bn> bb, VmemRef<bf16, Bm, Bn> cb,
         VmemRef<float, Bm, Bn> acc) {
        if (program_id(2) == 0) acc.store(0.0f);
        acc += dot<float>(ab.load(), bb.load());
        if (program_id(2) == num_programs(2) - 1) cb.store(cast<bf16>(acc.load()));
      },
      block<Bm, Bk>([](I i, I, I k) { return std::array{i, k}; }),
      block<Bk, Bn>([](I, I j, I k) { return std::array{k, j}; }),
      block<Bm, Bn>([](I i, I j, I) { return std::array{i, j}; }), scratch<VmemRef<float, Bm, Bn>>());
  return Tunable(kernel(k).name("matmul"), Mesh{{"x", 1}});
}

// The block sizes, each a compiled kernel: the dispatch from a configuration.
constexpr std::array<I, 3> kBm{8, 128, 256}, kBk{128, 256, 512}, kBn{128, 256, 512};
using Make = Tunable (*)();
template <std::size_t C>
constexpr std::pair<std::array<I, 3>, Make> entry() {
  constexpr I bm = kBm[C / 9], bk = kBk[C / 3 % 3], bn = kBn[C % 3];
  return {{bm, bk, bn}, &matmul<bm, bk, bn>};
}
template <std::size_t... C>
constexpr auto table(std::index_sequence<C...>) {
  return std::array{entry<C>()...};
}
constexpr auto kernels = table(std::make_index_sequence<27>{});

Tunable family(const TuneConfig& c) {
  for (const auto& [blocks, make] : kernels)
    if (blocks == std::array{c["bm"], c["bk"], c["bn"]}) return make();
  throw Error(fmt::format("tune_matmul: no kernel compiled for {}", c.label()));
}

}  // namespace

int main() {
  const std::vector<TuneConfig> configs = tune_grid(
      {{"bm", {kBm.begin(), kBm.end()}}, {"bk", {kBk.begin(), kBk.end()}}, {"bn", {kBn.begin(), kBn.end()}}});
  int wrong = 0;
  const auto expect = [&](bool ok, const std::string& what) {
    if (!ok) {
      fmt::print("WRONG: {}\n", what);
      ++wrong;
    }
  };

  const TuneResult v5e = tune(configs, family, targets::v5e(), {.keep_predictions = true});
  std::fputs(v5e.to_string(10).c_str(), stdout);
  expect(v5e.feasible_count() == configs.size(), "every configuration fits v5e");
  v5e.write_csv("tune_matmul.csv");

  const TuneResult v6e = tune(configs, family, targets::v6e());
  const TuneResult tpu7x = tune(configs, family, targets::tpu7x());
  std::fputs(tpu7x.to_string(5).c_str(), stdout);

  fmt::print("\nfits v6e, not TPU7x:\n");
  std::size_t only_v6e = 0;
  for (const TuneEntry& e : tpu7x.entries) {
    if (e.feasible || !v6e.find(e.config)->feasible) continue;
    ++only_v6e;
    fmt::print("  {}: {} ({})\n", e.config.label(), e.rule, e.reason.substr(0, e.reason.find(" (at ")));
    expect(e.rule == "tiling" && e.config["bm"] == 8, "only the 8-row bf16 blocks break TPU7x's tiling");
  }
  expect(only_v6e == 9, fmt::format("the 9 configurations of bm=8 fit v6e and not TPU7x (got {})", only_v6e));

  // The best on v5e, taken apart: a single-device pipeline waits only for its HBM copies.
  const TuneEntry& best = v5e.best();
  fmt::print("\nbest on v5e: {}, {:.2f} us predicted\n{}", best.config.label(), best.seconds * 1e6,
             best.prediction->explain());
  expect(best.config["bm"] != 8, "8-row blocks pad the matrix unit's rows and re-read B: never the best");
  fmt::print("{}\n", wrong == 0 ? "tune_matmul: ok" : "tune_matmul: WRONG");
  return wrong == 0 ? 0 : 1;
}
