// refx::calibrate (calibrate.hpp): the figures fitted from measured
// collectives. Synthetic measurements made by a target with known figures
// must give those figures back within 2 %; the measurement files
// (accelerator-microbenchmarks' TSV, op,shape,mesh,seconds) must parse, and
// name the line and field of what is wrong.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <refx/calibrate.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;
using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Measurement measured(std::string op, std::int64_t bytes, std::vector<std::int32_t> slice, bool parallel = false,
                     std::int32_t devices = 0) {
  Measurement m;
  m.op = std::move(op);
  m.bytes = bytes;
  m.slice = std::move(slice);
  m.parallel = parallel;
  m.devices = devices;
  m.seconds = 1;  // replaced by the synthetic truth
  return m;
}

// v5e's data sheet, and figures only a measurement knows.
Target truth() {
  Target t = targets::v5e();
  t.ici.hop_latency_seconds = 1.3e-6;
  t.ici.working_link_bytes_per_second = 0.8 * t.ici.link_bytes_per_second;
  t.dma_issue_seconds = 0.25e-6;
  t.ici.collective_fixed_seconds = 3e-6;
  return t;
}

TEST(Calibrate, RecoversKnownFiguresFromSyntheticMeasurements) {
  std::vector<Measurement> ms;
  for (std::int64_t kib : {4, 64, 1024, 8192}) {
    ms.push_back(measured("all_gather", kib << 10, {1, 4}));
    ms.push_back(measured("ppermute", kib << 10, {8, 1}));
  }
  ms.push_back(measured("all_gather", 256 << 10, {4, 4}));
  ms.push_back(measured("all_reduce", 1 << 20, {8, 1}));
  ms.push_back(measured("all_to_all", 1 << 20, {4, 1}));
  std::vector<CalibrationPoint> points = calibration_points(targets::v5e(), ms);
  for (CalibrationPoint& p : points) p.measured_seconds = p.predict(truth());
  const Calibration c = calibrate(targets::v5e(), points);
  ASSERT_TRUE(c.converged) << c.to_string();
  EXPECT_NEAR(c.target.ici.hop_latency_seconds / truth().ici.hop_latency_seconds, 1, 0.02) << c.to_string();
  EXPECT_NEAR(c.target.ici.link_rate() / truth().ici.link_rate(), 1, 0.02) << c.to_string();
  EXPECT_NEAR(c.target.dma_issue_seconds / truth().dma_issue_seconds, 1, 0.02) << c.to_string();
  EXPECT_NEAR(c.target.ici.collective_fixed_seconds / truth().ici.collective_fixed_seconds, 1, 0.02)
      << c.to_string();
  for (const Calibration::Residual& r : c.residuals) EXPECT_NEAR(r.after / r.measured, 1, 0.01) << r.label;
  // The data sheet's peak is kept; the fit replaces the working figure.
  EXPECT_EQ(c.target.ici.link_bytes_per_second, targets::v5e().ici.link_bytes_per_second);
  const std::string s = c.to_string();
  EXPECT_THAT(s, HasSubstr("ici.working_link_bytes_per_second"));
  EXPECT_THAT(s, HasSubstr("(80.0 % of the peak)"));
}

TEST(Calibrate, FitsOnlyTheFiguresAskedFor) {
  std::vector<Measurement> ms{measured("all_gather", 8 << 20, {1, 4}), measured("all_gather", 16 << 20, {1, 4})};
  std::vector<CalibrationPoint> points = calibration_points(targets::v5e(), ms);
  Target slow = targets::v5e();
  slow.ici.working_link_bytes_per_second = 30e9;
  for (CalibrationPoint& p : points) p.measured_seconds = p.predict(slow);
  const Calibration c = calibrate(targets::v5e(), points,
                                  {.hop_latency = false, .dma_issue = false, .collective_fixed = false});
  ASSERT_TRUE(c.converged) << c.to_string();
  EXPECT_NEAR(c.target.ici.link_rate() / 30e9, 1, 0.02);
  EXPECT_EQ(c.target.ici.hop_latency_seconds, targets::v5e().ici.hop_latency_seconds);
  EXPECT_THAT(c.to_string(), HasSubstr("(not fitted)"));
}

TEST(Calibrate, TPU7xParallelGroupsShareTheirChipsLinks) {
  // One TensorCore of each of 4 chips, the chips' other cores running the same all-gather beside it.
  const std::vector<Measurement> parallel{measured("all_gather", 16 << 20, {2, 2, 1}, true, 4)};
  const std::vector<Measurement> alone{measured("all_gather", 16 << 20, {2, 2, 1}, false, 8)};
  const double shared = calibration_points(targets::tpu7x(), parallel)[0].predict(targets::tpu7x());
  const double eight = calibration_points(targets::tpu7x(), alone)[0].predict(targets::tpu7x());
  EXPECT_GT(shared, 0);
  EXPECT_GT(eight, 0);
  EXPECT_THAT(error_of([] { calibration_points(targets::tpu7x(), {measured("all_gather", 1024, {2, 2, 1}, false, 4)}); }),
              HasSubstr("4 devices on 4 chips of 2 devices each"));
}

TEST(Calibrate, ReadsAcceleratorMicrobenchmarksTsv) {
  // The header of accelerator-microbenchmarks' Ironwood collectives (before sparsecore_used), one row.
  const std::string tsv =
      "iteration\top_type\treplica_group_type\trank\tmesh_shape\top_dimension\tsharding_strategy\tinput_num_"
      "elements\tmatrix_shape\ttransferred_data (GB)\tdtype_bytes\thlo_input_shape\thlo_output_shape\thlo_replica_"
      "groups\tstep_time_ms_p50\tstep_time_ms_p90\n"
      "64\tAG\tparallel\t4\t2x2x2\t1\t2x2x1\t65536\t((64, 8, 128))\t0.001572864\t4\tf32[64,8,128]\tf32[256,8,128]\t{"
      "{0,2,4,6}}\t0.02192\t0.0221\n";
  const std::vector<Measurement> m = parse_measurements(tsv, "t_all_gather.tsv");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].op, "all_gather");
  EXPECT_EQ(m[0].bytes, 65536 * 4);
  EXPECT_EQ(m[0].devices, 4);
  EXPECT_TRUE(m[0].parallel);
  EXPECT_EQ(m[0].slice, (std::vector<std::int32_t>{2, 2, 1}));
  EXPECT_DOUBLE_EQ(m[0].seconds, 21.92e-6);
  EXPECT_EQ(m[0].source, "t_all_gather.tsv:2");
  EXPECT_EQ(calibration_points(targets::tpu7x(), m).size(), 1u);
}

TEST(Calibrate, ReadsThePlainTable) {
  const std::vector<Measurement> m =
      parse_measurements("op,shape,mesh,seconds\nall_gather,bf16[512,8192],1x4,680e-6\nppermute,f32[1024],8,2e-6\n");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].dtype, DType::bf16);
  EXPECT_EQ(m[0].bytes, 512 * 8192 * 2);
  EXPECT_EQ(m[0].slice, (std::vector<std::int32_t>{1, 4}));
  EXPECT_EQ(m[1].op, "ppermute");
  EXPECT_EQ(m[1].label(), "ppermute f32 4.0 KiB on 8");
}

TEST(Calibrate, BadMeasurementsNameTheLineAndField) {
  const auto parse = [](std::string text) { return error_of([&] { parse_measurements(text, "m.csv"); }); };
  EXPECT_EQ(parse("op,shape,mesh,seconds\nall_gather,bf16[8],4,\n"), "refx: m.csv:2: field 'seconds' is missing");
  EXPECT_EQ(parse("op,shape,mesh,seconds\nall_gather,bf16[8],4,soon\n"),
            "refx: m.csv:2: field 'seconds' is 'soon', not a number");
  EXPECT_THAT(parse("op,shape,mesh,seconds\nbroadcast,bf16[8],4,1e-6\n"),
              HasSubstr("refx: m.csv:2: field 'op' is 'broadcast', an op calibrate does not know (it knows "
                        "all_gather, all_reduce"));
  EXPECT_EQ(parse("op,shape,mesh,seconds\nall_gather,f17[8],4,1e-6\n"),
            "refx: m.csv:2: field 'shape' names the element type 'f17', which refx does not have");
  EXPECT_EQ(parse("op,shape,mesh,seconds\nall_gather,bf16[8],4by4,1e-6\n"),
            "refx: m.csv:2: field 'mesh' is '4by4', not chips per torus axis such as 4x1");
  EXPECT_EQ(parse("op,shape,mesh,seconds\nall_gather,bf16[8],4,-1\n"), "refx: m.csv:2: field 'seconds' is not a positive time");
  EXPECT_EQ(parse("op,shape,mesh,seconds\n"), "refx: m.csv: a header and no measurements");
  EXPECT_EQ(error_of([] { read_measurements("/nonexistent/m.csv"); }),
            "refx: read_measurements: cannot read '/nonexistent/m.csv'");
}

TEST(Calibrate, TooFewPointsAndAFitThatDoesNotConverge) {
  const std::vector<Measurement> one{measured("all_gather", 1 << 20, {1, 4})};
  std::vector<CalibrationPoint> points = calibration_points(targets::v5e(), one);
  EXPECT_EQ(error_of([&] { calibrate(targets::v5e(), points); }),
            "refx: calibrate: 1 measurement cannot fit 4 figures (ici.hop_latency_seconds, "
            "ici.working_link_bytes_per_second, dma_issue_seconds, ici.collective_fixed_seconds): give at least 4, or "
            "turn figures off in CalibrateOptions");
  points[0].measured_seconds = 0;
  EXPECT_THAT(error_of([&] { calibrate(targets::v5e(), points, {.hop_latency = false, .dma_issue = false,
                                                                .collective_fixed = false}); }),
              HasSubstr("has a measured time of 0 s; a time is positive"));
  // One evaluation cannot fit anything: the fit says so and keeps the figures it started from.
  std::vector<Measurement> ms;
  for (std::int64_t kib : {4, 64, 1024, 8192}) ms.push_back(measured("all_gather", kib << 10, {1, 4}));
  points = calibration_points(targets::v5e(), ms);
  for (CalibrationPoint& p : points) p.measured_seconds = p.predict(truth());
  const Calibration c = calibrate(targets::v5e(), points, {.max_evaluations = 1});
  EXPECT_FALSE(c.converged);
  EXPECT_THAT(c.status, HasSubstr("did not converge"));
  EXPECT_EQ(c.target.ici.hop_latency_seconds, targets::v5e().ici.hop_latency_seconds);
  EXPECT_EQ(c.target.dma_issue_seconds, 0);
}

}  // namespace
