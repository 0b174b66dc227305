// refx::predict against published measurements (docs/predict-validation.md,
// "Against published measurements"): each point predicted with the shipped
// figures, then calibrated leave-one-out (refx::calibrate fitted on the
// other points, never on the one it is judged by). Prints the table the
// document records; asserts that calibration helps where it has points to
// learn from, and bounds the errors.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <refx/calibrate.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;

struct Judged {
  std::string label;
  double measured = 0, uncalibrated = 0, calibrated = 0;
};

double error(double predicted, double measured) { return predicted / measured - 1; }

void print(const char* title, const std::vector<Judged>& rows) {
  std::printf("%s\n%-44s %12s %22s %22s\n", title, "point", "measured us", "uncalibrated us (err)",
              "calibrated LOO us (err)");
  for (const Judged& j : rows)
    std::printf("%-44s %12.2f %12.2f (%+6.1f%%) %12.2f (%+6.1f%%)\n", j.label.c_str(), j.measured * 1e6,
                j.uncalibrated * 1e6, 100 * error(j.uncalibrated, j.measured), j.calibrated * 1e6,
                100 * error(j.calibrated, j.measured));
}

// The scaling book, "Sharded Matrices", pop quiz 2 (docs/predict-validation.md [SB-S]):
// AllGather over the 4-chip axis Y of a v5e {X: 8, Y: 4} mesh (no wraparound),
// bf16[512, 8192] per device measured at 680 us and bf16[64, 256] at about 8 us.
// One point left out leaves one to fit: the link's working rate.
TEST(PredictMeasured, ScalingBookAllGatherOnV5e) {
  const std::vector<Measurement> ms = parse_measurements(
      "op,shape,mesh,seconds\n"
      "all_gather,bf16[512,8192],1x4,680e-6\n"
      "all_gather,bf16[64,256],1x4,8e-6\n",
      "scaling-book");
  const Target& t = targets::v5e();
  const std::vector<CalibrationPoint> points = calibration_points(t, ms);
  std::vector<Judged> rows;
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::vector<CalibrationPoint> others;
    for (std::size_t k = 0; k < points.size(); ++k)
      if (k != i) others.push_back(points[k]);
    const Calibration c =
        calibrate(t, others, {.hop_latency = false, .dma_issue = false, .collective_fixed = false});
    rows.push_back({points[i].label, points[i].measured_seconds, points[i].predict(t), points[i].predict(c.target)});
  }
  print("the scaling book's v5e all-gathers (calibrated on the other point: the link rate)", rows);
  // The large gather is bandwidth-bound: within 20 % with the shipped working figures.
  EXPECT_LT(std::abs(error(rows[0].uncalibrated, rows[0].measured)), 0.2);
  // The small one is latency-bound: what the large one teaches (the link rate) cannot fix it.
  EXPECT_LT(rows[1].uncalibrated, rows[1].measured * 2);
}

// accelerator-microbenchmarks, Ironwood/guides/collectives/all_gather.md
// (docs/predict-validation.md [AM-AG]): TPU7x all-gather of f32 in
// "parallel" groups of 4 devices (one TensorCore of each of 4 chips, the
// chips' other cores gathering beside them), on topologies 2x2x1 and
// 2x2x2. The guide gives the transferred data and the achieved bandwidth
// of its own definition (transferred = input x (rank - 1) x 2); the time
// is their quotient. A group of 4 chips lies on a 2x2 face in both.
TEST(PredictMeasured, IronwoodAllGatherGuide) {
  struct Row {
    const char* topology;
    std::int64_t elements;  // per device
    double transferred_gb, achieved_gb_per_s;
  };
  const Row guide[] = {
      {"2x2x1", 65536, 0.001572864, 71.7703034},     {"2x2x1", 262144, 0.006291456, 129.1869148},
      {"2x2x1", 1048576, 0.025165824, 161.9040742},  {"2x2x1", 4194304, 0.100663296, 174.765465},
      {"2x2x1", 16777216, 0.402653184, 178.7714158}, {"2x2x2", 65536, 0.001572864, 69.53210305},
      {"2x2x2", 262144, 0.006291456, 127.3945462},   {"2x2x2", 1048576, 0.025165824, 162.0864029},
      {"2x2x2", 4194304, 0.100663296, 174.6652133},  {"2x2x2", 16777216, 0.402653184, 178.7592252},
  };
  std::vector<Measurement> ms;
  for (const Row& r : guide) {
    Measurement m;
    m.op = "all_gather";
    m.bytes = r.elements * 4;
    m.slice = {2, 2, 1};
    m.devices = 4;
    m.parallel = true;
    m.seconds = r.transferred_gb / r.achieved_gb_per_s;
    m.source = r.topology;
    ms.push_back(m);
  }
  const Target& t = targets::tpu7x();
  const std::vector<CalibrationPoint> points = calibration_points(t, ms);
  std::vector<Judged> rows;
  double before = 0, after = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    // Leave out the point and its twin of the other topology (the same bytes on the same face).
    std::vector<CalibrationPoint> others;
    for (std::size_t k = 0; k < points.size(); ++k)
      if (ms[k].bytes != ms[i].bytes) others.push_back(points[k]);
    const Calibration c = calibrate(t, others);
    ASSERT_TRUE(c.converged) << c.to_string();
    rows.push_back({fmt::format("{} ({})", points[i].label, ms[i].source), points[i].measured_seconds,
                    points[i].predict(t), points[i].predict(c.target)});
    before += std::abs(error(rows.back().uncalibrated, rows.back().measured));
    after += std::abs(error(rows.back().calibrated, rows.back().measured));
  }
  print("TPU7x all-gather, groups of 4 (calibrated on the other sizes)", rows);
  const Calibration all = calibrate(t, points);
  std::printf("%s", all.to_string().c_str());
  std::printf("mean |error|: uncalibrated %.1f %%, calibrated leave-one-out %.1f %%\n", 100 * before / 10,
              100 * after / 10);
  EXPECT_LT(after, before);
}

}  // namespace
