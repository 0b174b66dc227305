#pragma once
// refx::calibrate: fits the figures no data sheet gives (per-hop latency,
// the link bandwidth a transfer achieves, a copy's issue cost, a
// collective's fixed cost) to measured times of collectives on a TPU, so
// that refx::predict and refx::tune start from what the user's own machine
// does (docs/targets.md, "Calibration").
//
//   auto m = refx::read_measurements("t_all_gather_AB12CD34EF.tsv");  // accelerator-microbenchmarks, or
//   auto m = refx::read_measurements("mine.csv");     // op,shape,mesh,seconds: all_gather,bf16[512,8192],4x1,680e-6
//   refx::Calibration c = refx::calibrate(refx::targets::v5e(), m);
//   std::fputs(c.to_string().c_str(), stdout);      // the figures before and after, each point's residual
//   auto p = refx::predict(exe, c.target, x);        // the fitted target
//
// Each measurement is predicted with refx's own collective of the same op,
// bytes and chips (the model of refx's algorithm, not of XLA's), and the
// figures are fitted by Levenberg-Marquardt (Eigen) to the relative errors.
// A fit that does not converge says so and keeps the figures it started from.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <refx/core/dtype.hpp>
#include <refx/core/source_location.hpp>
#include <refx/predict.hpp>
#include <refx/target/target.hpp>

namespace refx {

/// One measured collective.
struct Measurement {
  /// all_gather, all_reduce, reduce_scatter, all_to_all or ppermute (to the next device of a ring).
  std::string op;
  DType dtype = DType::f32;
  std::int64_t bytes = 0;  ///< each device's input
  /// Chips the collective spans per torus axis ("4x1", "2x2x1"): its devices
  /// lie on them row-major, a chip's devices (TPU7x) next to each other.
  std::vector<std::int32_t> slice;
  /// Devices in the collective: the slice's chips times Target::devices_per_chip,
  /// or (a "parallel" group on TPU7x) one per chip while the chips' other
  /// TensorCores run the same collective beside it: then `parallel`.
  std::int32_t devices = 0;
  bool parallel = false;
  double seconds = 0;
  std::string source;  ///< file:line it was read from
  /// "all_gather f32 8.0 MiB on 4x1".
  std::string label() const;
};

/// The measurements in `path`: an accelerator-microbenchmarks collectives
/// TSV (op_type, rank, input_num_elements, dtype_bytes, sharding_strategy,
/// step_time_ms_p50, ...; the median step time), or a table with the
/// columns op,shape,mesh,seconds (shape as dtype[dims], each device's input;
/// mesh the chips per torus axis). Throws refx::Error naming the line and
/// the field that is missing, not a number, or an unknown op.
std::vector<Measurement> read_measurements(const std::string& path);
std::vector<Measurement> parse_measurements(std::string_view text, std::string_view source = "<text>");

/// What calibrate() fits; each figure on by default.
struct CalibrateOptions {
  bool hop_latency = true;       ///< IciTopology::hop_latency_seconds
  bool link_bandwidth = true;    ///< IciTopology::working_link_bytes_per_second (at most the peak)
  bool dma_issue = true;         ///< Target::dma_issue_seconds
  bool collective_fixed = true;  ///< IciTopology::collective_fixed_seconds
  int max_evaluations = 400;     ///< of the whole set of predictions
};

/// One point the fit is judged on: a label, a measured time, and how the
/// model predicts it for a target.
struct CalibrationPoint {
  std::string label;
  double measured_seconds = 0;
  std::function<double(const Target&)> predict;
};

/// The points of `measurements` on `t`: each one's collective compiled once
/// for its mesh and predicted (times only) for every target the fit tries.
/// Throws refx::Error naming a measurement the target cannot hold.
std::vector<CalibrationPoint> calibration_points(const Target& t, const std::vector<Measurement>& measurements,
                                                 refx::source_location loc = refx::source_location::current());

/// The outcome of a fit.
struct Calibration {
  Target target;  ///< the starting target with the fitted figures
  struct Figure {
    std::string name;  ///< the Target field
    double before = 0, after = 0;
    bool fitted = false;
  };
  std::vector<Figure> figures;
  struct Residual {
    std::string label;
    double measured = 0, before = 0, after = 0;  ///< seconds: measured, predicted uncalibrated and calibrated
  };
  std::vector<Residual> residuals;
  bool converged = false;
  std::string status;  ///< the fit's outcome, in words
  /// The figures before and after, then per point measured, predicted and the error.
  std::string to_string() const;
};

/// Fits `o`'s figures of `t` to the points. Throws refx::Error when there
/// are fewer points than figures to fit, or a point's measured time is not
/// positive.
Calibration calibrate(const Target& t, const std::vector<CalibrationPoint>& points, const CalibrateOptions& o = {});
/// calibrate over calibration_points(t, measurements).
Calibration calibrate(const Target& t, const std::vector<Measurement>& measurements, const CalibrateOptions& o = {},
                      refx::source_location loc = refx::source_location::current());

}  // namespace refx

#include <refx/calibrate/detail/calibrate.hpp>
