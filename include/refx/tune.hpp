#pragma once
// refx::tune: a kernel family's configurations ranked for a TPU generation
// without one (docs/targets.md, "Tuning"). Each configuration is traced and
// checked on the CPU: one that breaks a rule of the target (its Vmem over
// the scoped limit, a block off the tiling, an element type the target
// lacks) or throws while tracing is kept as infeasible, with the rule and by
// how much; the rest are predicted (refx::predict) and ranked by predicted
// time, with their Vmem peak and headroom.
//
//   auto family = [](const refx::TuneConfig& c) -> refx::Tunable {
//     return matmul_for(c["bm"], c["bn"]);   // the user's dispatch to a compiled block size
//   };
//   refx::TuneResult r = refx::tune(refx::tune_grid({{"bm", {128, 256, 512}}, {"bn", {128, 256}}}), family,
//                                   refx::targets::v5e());
//   std::fputs(r.to_string().c_str(), stdout);
//   r.write_csv("ranked.csv");            // time the top few on a TPU, fill in measured_seconds
//   auto back = refx::TuneResult::read_csv("ranked.csv");
//   std::fputs(back.measured_report().c_str(), stdout);  // predicted against measured, rank correlation
//
// Deterministic: the ranking depends only on the family, the configurations
// and the target (ties keep the configurations' order), whatever the thread
// count. The family is called from several threads at once
// (TuneOptions::threads = 1 calls it from one).

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <refx/core/source_location.hpp>
#include <refx/kernel.hpp>
#include <refx/predict.hpp>

namespace refx {

/// One configuration of a kernel family: named integer values (block
/// sizes, buffer counts, an algorithm's index), in order.
class TuneConfig {
 public:
  using Values = std::vector<std::pair<std::string, std::int64_t>>;
  TuneConfig() = default;
  TuneConfig(std::initializer_list<std::pair<std::string, std::int64_t>> values) : values_(values) {}
  explicit TuneConfig(Values values) : values_(std::move(values)) {}

  /// The value named `name`; throws refx::Error naming it and the names there are.
  std::int64_t operator[](std::string_view name) const;
  bool has(std::string_view name) const noexcept;
  const Values& values() const noexcept { return values_; }
  /// "bm=128 bn=256".
  std::string label() const;
  friend bool operator==(const TuneConfig&, const TuneConfig&) = default;

 private:
  Values values_;
};

/// Every combination of the axes' values, the first axis varying slowest.
/// Throws refx::Error for an axis with no values or a name given twice.
std::vector<TuneConfig> tune_grid(const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& axes);

/// One configuration ready to be checked and predicted: a kernel, the mesh
/// it is compiled for, and how to make its arguments.
class Tunable {
 public:
  /// `shapes`: as Kernel::compile takes them (none if the parameters are static).
  template <class F>
  Tunable(Kernel<F> k, Mesh mesh, std::vector<Shape> shapes = {},
          refx::source_location loc = refx::source_location::current())
      : mesh_(std::move(mesh)) {
    compile_ = [k = std::move(k), m = mesh_, shapes = std::move(shapes), loc](const Target& t) {
      Kernel<F> for_target = k;
      return for_target.target(t, TargetMode::warn).compile(m, shapes, detail::global_runtime(), loc);
    };
  }
  /// The arguments predict runs the configuration on (one Array per
  /// parameter); without this, zero-filled Arrays of the parameters' types.
  Tunable& args(std::function<std::vector<Array>(const Executable&)> make) {
    args_ = std::move(make);
    return *this;
  }
  /// Where the mesh lies on the torus (predict's TorusLayout).
  Tunable& layout(TorusLayout l) {
    layout_ = std::move(l);
    return *this;
  }

  /// Compiles for `t`, its rules' violations kept in the target report.
  Executable compile(const Target& t) const { return compile_(t); }
  std::vector<Array> make_args(const Executable& exe) const;
  const TorusLayout& torus_layout() const noexcept { return layout_; }

 private:
  Mesh mesh_;
  std::function<Executable(const Target&)> compile_;
  std::function<std::vector<Array>(const Executable&)> args_;
  TorusLayout layout_{};
};

struct TuneOptions {
  /// Configurations checked and predicted at once; 0: the hardware's threads.
  int threads = 0;
  /// A progress line on stderr: `automatic` when stderr is a terminal.
  enum class Progress : std::uint8_t { automatic, on, off } progress = Progress::automatic;
  /// Keep each feasible configuration's whole Prediction (timeline, explain()).
  bool keep_predictions = false;
};

/// One configuration's outcome.
struct TuneEntry {
  TuneConfig config;
  bool feasible = false;
  double seconds = 0;                        ///< predicted (feasible ones)
  double exposed_communication_seconds = 0;  ///< of the slowest device
  std::int64_t vmem_peak_bytes = 0;
  std::int64_t vmem_limit_bytes = 0;  ///< the scoped limit it is checked against
  /// Infeasible: the rule ("capacity", "tiling", "element type", "matmul
  /// type", "mesh"; "trace" when tracing threw, "predict" when predict
  /// did), its whole message, and for capacity the bytes over the limit.
  std::string rule, reason;
  std::int64_t over_bytes = 0;
  std::optional<double> measured_seconds;        ///< from a results file read back
  std::shared_ptr<const Prediction> prediction;  ///< TuneOptions::keep_predictions

  std::int64_t headroom_bytes() const noexcept { return vmem_limit_bytes - vmem_peak_bytes; }
};

/// The ranked outcome of a sweep.
class TuneResult {
 public:
  std::string target;
  /// Feasible configurations fastest first (ties in the given order), then
  /// the infeasible ones in the given order.
  std::vector<TuneEntry> entries;

  std::size_t feasible_count() const noexcept;
  /// The fastest feasible configuration; throws refx::Error when none is.
  const TuneEntry& best() const;
  /// The entry of `c`, or null.
  const TuneEntry* find(const TuneConfig& c) const noexcept;
  /// A table: the first `rows` feasible configurations with predicted time,
  /// Vmem peak and headroom, then every infeasible one with its rule.
  std::string to_string(std::size_t rows = 20) const;
  /// One line per entry, ranked; a measured_seconds column to fill in.
  std::string to_csv() const;
  /// Writes to_csv() to `path`; throws refx::Error naming it.
  void write_csv(const std::string& path) const;
  /// A results file back, measured_seconds where filled in. Throws
  /// refx::Error naming the line and the field that is missing or not a number.
  static TuneResult from_csv(std::string_view text, std::string_view source = "<text>");
  static TuneResult read_csv(const std::string& path);
  /// Predicted against measured for every entry with a measurement: the
  /// ratios, and Spearman's rank correlation of the two orders.
  std::string measured_report() const;
};

/// Checks and predicts every configuration of `family` on `t`, in parallel.
/// The family maps a configuration to a Tunable; a configuration whose
/// family call or compile throws is infeasible (rule "trace") and the sweep
/// goes on. Throws refx::Error for an invalid target or no configurations.
TuneResult tune(const std::vector<TuneConfig>& configs, const std::function<Tunable(const TuneConfig&)>& family,
                const Target& t, const TuneOptions& o = {});

}  // namespace refx

#include <refx/tune/detail/tune.hpp>
