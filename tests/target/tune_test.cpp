// refx::tune (tune.hpp): a family of row-block sizes for one elementwise
// pipeline, ranked on v5e. The ranking must be the predictions made one by
// one, infeasible configurations must carry their rule and how far over they
// are, the sweep must not depend on its thread count, and the results must
// survive the CSV round trip a user times on a TPU.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include <refx/refx.hpp>
#include <refx/tune.hpp>

namespace {
using namespace refx;
using ::testing::HasSubstr;
using I = std::int64_t;

constexpr I kRows = 4096, kCols = 1024;

template <I R>
auto scale_kernel() {
  return pipeline_kernel<HbmRef<const float, kRows, kCols>, HbmRef<float, kRows, kCols>>(
      grid(kRows / R), [](VmemRef<const float, R, kCols> x, VmemRef<float, R, kCols> y) { y.store(x.load() * 2.0f); },
      block<R, kCols>([](I i) { return std::array{i, I{0}}; }),
      block<R, kCols>([](I i) { return std::array{i, I{0}}; }));
}

// The user's dispatch from a configuration to a compiled block size.
Tunable family(const TuneConfig& c) {
  const Mesh one{{"x", 1}};
  switch (c["rows"]) {
    case 4: return Tunable(kernel(scale_kernel<4>()).name("scale"), one);
    case 64: return Tunable(kernel(scale_kernel<64>()).name("scale"), one);
    case 256: return Tunable(kernel(scale_kernel<256>()).name("scale"), one);
    case 512: return Tunable(kernel(scale_kernel<512>()).name("scale"), one);
    case 2048: return Tunable(kernel(scale_kernel<2048>()).name("scale"), one);
    default: throw Error(fmt::format("refx test: no kernel for {} rows", c["rows"]));
  }
}

const std::vector<TuneConfig> configs = tune_grid({{"rows", {2048, 512, 4, 64, 3, 256}}});

// v5e with a cost to issue each copy: the elementwise pipeline moves the
// same bytes whatever its blocks, so without it every feasible block size
// ties (at the HBM's rate), and with it fewer, larger blocks win.
Target issuing() {
  Target t = targets::v5e();
  t.dma_issue_seconds = 1e-6;
  return t;
}

TEST(Tune, RanksTheFeasibleByTheirPredictionsMadeOneByOne) {
  const TuneResult r = tune(configs, family, issuing(), {.progress = TuneOptions::Progress::off});
  ASSERT_EQ(r.entries.size(), configs.size());
  ASSERT_EQ(r.feasible_count(), 3u) << r.to_string();
  for (std::size_t i = 0; i < 3; ++i) {
    const TuneEntry& e = r.entries[i];
    ASSERT_TRUE(e.feasible);
    if (i > 0) {
      EXPECT_LT(r.entries[i - 1].seconds, e.seconds);
    }
    // The same configuration predicted on its own.
    const Tunable t = family(e.config);
    const Executable exe = t.compile(issuing());
    const Prediction p = predict(exe, issuing(), t.make_args(exe));
    EXPECT_EQ(e.seconds, p.seconds()) << e.config.label();
    EXPECT_EQ(e.vmem_peak_bytes, exe.target_report().vmem_peak_bytes);
    EXPECT_EQ(e.vmem_limit_bytes, 16 << 20);  // v5e's default scoped limit
    EXPECT_EQ(e.headroom_bytes(), (16 << 20) - e.vmem_peak_bytes);
  }
  EXPECT_EQ(&r.best(), &r.entries[0]);
  EXPECT_EQ(r.best().config["rows"], 512);
  // Without an issue cost every block size moves the same bytes at the same rate: a tie (to the
  // picosecond), kept in the given order.
  const TuneResult ties = tune(configs, family, targets::v5e(), {.progress = TuneOptions::Progress::off});
  EXPECT_NEAR(ties.entries[0].seconds, ties.entries[2].seconds, 1e-12);
  EXPECT_EQ(ties.entries[0].config["rows"], 512);
  EXPECT_EQ(ties.entries[1].config["rows"], 64);
}

TEST(Tune, InfeasibleConfigurationsCarryTheirRuleAndByHowMuch) {
  const TuneResult r = tune(configs, family, issuing(), {.progress = TuneOptions::Progress::off});
  // Infeasible ones follow the feasible, in the order given.
  ASSERT_EQ(r.entries.size(), 6u);
  const TuneEntry& big = r.entries[3];
  EXPECT_EQ(big.config, (TuneConfig{{"rows", 2048}}));
  EXPECT_EQ(big.rule, "capacity");
  // Two slots of two 2048 x 1024 f32 blocks: 32 MiB against v5e's 16 MiB scoped limit.
  EXPECT_EQ(big.over_bytes, (32 << 20) - (16 << 20));
  EXPECT_THAT(big.reason, HasSubstr("more than the scoped Vmem limit of 16777216 bytes (16.0 MiB) of one v5e"));
  const TuneEntry& thin = r.entries[4];
  EXPECT_EQ(thin.config["rows"], 4);
  EXPECT_EQ(thin.rule, "tiling");
  const TuneEntry& none = r.entries[5];
  EXPECT_EQ(none.rule, "trace");
  EXPECT_EQ(none.reason, "refx test: no kernel for 3 rows");
  const std::string table = r.to_string();
  EXPECT_THAT(table, HasSubstr("infeasible (capacity, 16.0 MiB over): refx: the buffers live at once"));
  EXPECT_THAT(table, HasSubstr("tune on v5e: 6 configurations, 3 feasible"));
  // v6e's 32 MiB scoped limit takes the 2048-row blocks; raising v5e's does too.
  const TuneResult v6e = tune(configs, family, targets::v6e(), {.progress = TuneOptions::Progress::off});
  EXPECT_TRUE(v6e.find(TuneConfig{{"rows", 2048}})->feasible);
  Target raised = issuing();
  raised.vmem_limit_bytes = 64 << 20;
  EXPECT_TRUE(tune(configs, family, raised, {.progress = TuneOptions::Progress::off})
                  .find(TuneConfig{{"rows", 2048}})
                  ->feasible);
}

TEST(Tune, TheSameRankingOnOneThreadAndOnMany) {
  const TuneResult one = tune(configs, family, issuing(), {.threads = 1, .progress = TuneOptions::Progress::off});
  const TuneResult many = tune(configs, family, issuing(), {.threads = 4, .progress = TuneOptions::Progress::off});
  ASSERT_EQ(one.entries.size(), many.entries.size());
  for (std::size_t i = 0; i < one.entries.size(); ++i) {
    EXPECT_EQ(one.entries[i].config, many.entries[i].config);
    EXPECT_EQ(one.entries[i].seconds, many.entries[i].seconds);
    EXPECT_EQ(one.entries[i].rule, many.entries[i].rule);
  }
  EXPECT_EQ(one.to_csv(), many.to_csv());
}

TEST(Tune, ResultsRoundTripThroughCsvWithMeasurements) {
  const TuneResult r = tune(configs, family, issuing(), {.progress = TuneOptions::Progress::off});
  TuneResult back = TuneResult::from_csv(r.to_csv(), "ranked.csv");
  EXPECT_EQ(back.target, "v5e");
  ASSERT_EQ(back.entries.size(), r.entries.size());
  for (std::size_t i = 0; i < r.entries.size(); ++i) {
    EXPECT_EQ(back.entries[i].config, r.entries[i].config);
    EXPECT_EQ(back.entries[i].feasible, r.entries[i].feasible);
    EXPECT_NEAR(back.entries[i].seconds, r.entries[i].seconds, 1e-8 * r.entries[i].seconds);
    EXPECT_EQ(back.entries[i].rule, r.entries[i].rule);
    EXPECT_EQ(back.entries[i].reason, r.entries[i].reason);  // commas and quotes survive
    EXPECT_EQ(back.entries[i].over_bytes, r.entries[i].over_bytes);
  }
  EXPECT_EQ(back.measured_report(), "tune on v5e: no configuration has a measured time\n");
  // Measured on a TPU: the order reversed.
  back.entries[0].measured_seconds = 3e-3;
  back.entries[1].measured_seconds = 2e-3;
  back.entries[2].measured_seconds = 1e-3;
  const TuneResult measured = TuneResult::from_csv(back.to_csv(), "measured.csv");
  EXPECT_EQ(measured.entries[2].measured_seconds, 1e-3);
  const std::string report = measured.measured_report();
  EXPECT_THAT(report, HasSubstr("Spearman rank correlation of predicted and measured: -1.000"));
  EXPECT_THAT(report, HasSubstr(fmt::format("the fastest measured ({}) is predicted rank 3 of 3",
                                            measured.entries[2].config.label())));
}

TEST(Tune, BadInputIsNamed) {
  const auto message = [](auto f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message([] { tune({}, family, targets::v5e()); }),
            "refx: tune: no configurations to tune (tune_grid of no axes?)");
  EXPECT_EQ(message([] { tune_grid({{"rows", {}}}); }), "refx: tune_grid: axis 'rows' has no values");
  EXPECT_EQ(message([] { tune_grid({{"a", {1}}, {"a", {2}}}); }), "refx: tune_grid: axis 'a' is named twice");
  EXPECT_EQ(message([] { (void)TuneConfig{{"rows", 8}}["cols"]; }),
            "refx: TuneConfig {rows=8} has no value named 'cols' (it has rows)");
  const std::string csv =
      "# refx::tune,v5e\nrank,rows,feasible,predicted_seconds,vmem_peak_bytes,vmem_limit_bytes,headroom_bytes,rule,"
      "over_bytes,reason,measured_seconds\n1,64,1,1e-3,100,200,100,,0,,fast\n";
  EXPECT_EQ(message([&] { TuneResult::from_csv(csv, "mine.csv"); }),
            "refx: mine.csv:3: field 'measured_seconds' is 'fast', not a number");
  EXPECT_EQ(message([&] { TuneResult::from_csv("rank,rows\n", "short.csv"); }),
            "refx: short.csv:1: the header has no column 'feasible'");
  EXPECT_EQ(message([] { TuneResult::read_csv("/nonexistent/ranked.csv"); }),
            "refx: TuneResult::read_csv: cannot read '/nonexistent/ranked.csv'");
}

}  // namespace
