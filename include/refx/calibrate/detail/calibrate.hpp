#pragma once
// The definitions of calibrate.hpp (inline: a program that calibrates includes it).

#include <algorithm>
#include <cmath>
#include <memory>

#include <Eigen/Core>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unsupported/Eigen/NonLinearOptimization>

#include <refx/collectives/programs.hpp>
#include <refx/core/detail/delimited.hpp>
#include <refx/core/error.hpp>

namespace refx {

inline std::string Measurement::label() const {
  return fmt::format("{} {} {} on {}{}", op, dtype, detail::human_bytes(bytes), fmt::join(slice, "x"),
                     parallel ? " (parallel)" : "");
}

namespace detail {

inline const std::vector<std::string_view>& measured_ops() {
  static const std::vector<std::string_view> ops{"all_gather", "all_reduce", "reduce_scatter", "all_to_all",
                                                 "ppermute"};
  return ops;
}

/// A row's field by its column name, with the file's line in every error.
class FieldReader {
 public:
  FieldReader(const std::vector<std::string>& head, const DelimitedRow& row, std::string_view source)
      : head_(head), row_(row), source_(source) {}
  [[noreturn]] void fail(std::string_view field, const std::string& why) const {
    throw Error(fmt::format("refx: {}:{}: field '{}' {}", source_, row_.line, field, why));
  }
  const std::string& text(std::string_view name) const {
    const auto it = std::find(head_.begin(), head_.end(), name);
    if (it == head_.end()) fail(name, "is not a column of the header");
    const auto c = static_cast<std::size_t>(it - head_.begin());
    if (c >= row_.fields.size() || row_.fields[c].empty()) fail(name, "is missing");
    return row_.fields[c];
  }
  double number(std::string_view name) const {
    const std::string& f = text(name);
    const std::optional<double> v = parse_number(f);
    if (!v) fail(name, fmt::format("is '{}', not a number", f));
    return *v;
  }
  std::string location() const { return fmt::format("{}:{}", source_, row_.line); }

 private:
  const std::vector<std::string>& head_;
  const DelimitedRow& row_;
  std::string_view source_;
};

/// "2x2x1" -> {2, 2, 1}; empty when it is not such a list.
inline std::vector<std::int32_t> parse_dims(std::string_view s) {
  std::vector<std::int32_t> dims;
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t x = std::min(s.find('x', at), s.size());
    const std::string part(s.substr(at, x - at));
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 6) return {};
    dims.push_back(std::stoi(part));
    if (dims.back() < 1) return {};
    at = x + 1;
  }
  return dims;
}

inline DType dtype_named(std::string_view name, const FieldReader& r, std::string_view field) {
  for (int i = 0; i <= static_cast<int>(last_dtype); ++i)
    if (name_of(static_cast<DType>(i)) == name) return static_cast<DType>(i);
  r.fail(field, fmt::format("names the element type '{}', which refx does not have", name));
}

inline void check_op(const std::string& op, const FieldReader& r, std::string_view field) {
  const auto& ops = measured_ops();
  if (std::find(ops.begin(), ops.end(), op) == ops.end())
    r.fail(field, fmt::format("is '{}', an op calibrate does not know (it knows {})", op, fmt::join(ops, ", ")));
}

// accelerator-microbenchmarks (Ironwood collectives): op_type AG / AR / RS /
// A2A, the group's devices in rank, each device's input of
// input_num_elements x dtype_bytes, the group's device mesh in
// sharding_strategy, milliseconds.
inline Measurement microbenchmark_row(const FieldReader& r) {
  Measurement m;
  const std::string& type = r.text("op_type");
  m.op = type == "AG"    ? "all_gather"
         : type == "AR"  ? "all_reduce"
         : type == "RS"  ? "reduce_scatter"
         : type == "A2A" ? "all_to_all"
                         : "";
  if (m.op.empty()) r.fail("op_type", fmt::format("is '{}', not one of AG, AR, RS, A2A", type));
  const double size = r.number("dtype_bytes");
  m.dtype = size == 4 ? DType::f32 : size == 2 ? DType::bf16 : size == 1 ? DType::i8 : DType::pred;
  if (m.dtype == DType::pred) r.fail("dtype_bytes", fmt::format("is {}: calibrate takes 1, 2 or 4", size));
  m.bytes = static_cast<std::int64_t>(r.number("input_num_elements") * size);
  m.devices = static_cast<std::int32_t>(r.number("rank"));
  m.parallel = r.text("replica_group_type") == "parallel";
  m.slice = parse_dims(r.text("sharding_strategy"));
  if (m.slice.empty()) r.fail("sharding_strategy", "is not chips per axis such as 2x2x1");
  m.seconds = r.number("step_time_ms_p50") * 1e-3;
  return m;
}

// op,shape,mesh,seconds: shape as dtype[dims] of each device's input.
inline Measurement plain_row(const FieldReader& r) {
  Measurement m;
  m.op = r.text("op");
  check_op(m.op, r, "op");
  const std::string& shape = r.text("shape");
  const std::size_t open = shape.find('[');
  if (open == std::string::npos || shape.back() != ']')
    r.fail("shape", fmt::format("is '{}', not dtype[dims] such as bf16[512,8192]", shape));
  m.dtype = dtype_named(shape.substr(0, open), r, "shape");
  std::int64_t elements = 1;
  std::string dims = shape.substr(open + 1, shape.size() - open - 2);
  std::replace(dims.begin(), dims.end(), ',', 'x');
  dims.erase(std::remove(dims.begin(), dims.end(), ' '), dims.end());
  const std::vector<std::int32_t> d = parse_dims(dims);
  if (d.empty()) r.fail("shape", fmt::format("is '{}': its dimensions are not positive integers", shape));
  for (std::int32_t x : d) elements *= x;
  m.bytes = elements * static_cast<std::int64_t>(size_of(m.dtype));
  m.slice = parse_dims(r.text("mesh"));
  if (m.slice.empty()) r.fail("mesh", fmt::format("is '{}', not chips per torus axis such as 4x1", r.text("mesh")));
  m.seconds = r.number("seconds");
  return m;
}

}  // namespace detail

inline std::vector<Measurement> parse_measurements(std::string_view text, std::string_view source) {
  const std::vector<detail::DelimitedRow> rows = detail::parse_delimited(text, detail::sniff_separator(text), source);
  if (rows.empty()) throw Error(fmt::format("refx: {}: no measurements (an empty file)", source));
  const std::vector<std::string>& head = rows[0].fields;
  const bool bench = std::find(head.begin(), head.end(), "op_type") != head.end();
  std::vector<Measurement> out;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const detail::FieldReader r(head, rows[i], source);
    Measurement m = bench ? detail::microbenchmark_row(r) : detail::plain_row(r);
    if (!(m.seconds > 0)) r.fail(bench ? "step_time_ms_p50" : "seconds", "is not a positive time");
    if (m.bytes <= 0) r.fail(bench ? "input_num_elements" : "shape", "gives no bytes");
    m.source = r.location();
    out.push_back(std::move(m));
  }
  if (out.empty()) throw Error(fmt::format("refx: {}: a header and no measurements", source));
  return out;
}

inline std::vector<Measurement> read_measurements(const std::string& path) {
  return parse_measurements(detail::read_text_file(path, "read_measurements"), path);
}

namespace detail {

/// A measurement's collective, compiled once, and its arguments.
struct MeasuredProgram {
  std::optional<Executable> exe;
  TorusLayout layout;
  std::vector<Array> args;
};

template <class T>
Executable measured_executable(const Measurement& m, const Mesh& mesh) {
  const collectives::ProgramOptions o{.axis = "x"};
  const std::int64_t n = mesh.axis_size("x"), elements = m.bytes / static_cast<std::int64_t>(sizeof(T));
  if (m.op == "all_gather") return collectives::all_gather_program<T>(mesh, elements, o);
  if (m.op == "all_reduce") return collectives::all_reduce_program<T>(mesh, elements, o);
  if (m.op == "reduce_scatter") return collectives::reduce_scatter_program<T>(mesh, elements, o);
  if (m.op == "all_to_all") return collectives::all_to_all_program<T>(mesh, std::max<std::int64_t>(elements / n, 1), o);
  // ppermute: each device's input to the next device of the ring.
  return kernel([](Ref<const T, extents<dyn>, Hbm> x, Ref<T, extents<dyn>, Hbm> y) {
           const auto right = (axis_index("x") + 1) % axis_size("x");
           run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
             auto c = make_async_remote_copy(x, y, send, recv, DeviceId::named({{"x", right}}));
             c.start();
             c.wait();
           });
         })
      .name("ppermute")
      .compile(mesh, {Shape{elements}, Shape{elements}});
}

inline std::shared_ptr<MeasuredProgram> measured_program(const Target& t, const Measurement& m) {
  const auto fail = [&](const std::string& why) -> Error {
    return Error(fmt::format("refx: calibrate: {} ({}): {}", m.label(), m.source.empty() ? "given" : m.source, why));
  };
  const std::size_t rank = t.ici.dims.size();
  if (m.slice.size() > rank)
    throw fail(fmt::format("its {} axes of chips do not fit the {} axes of {}'s torus", m.slice.size(), rank, t.name));
  std::vector<std::int32_t> slice = m.slice;
  slice.resize(rank, 1);
  std::int32_t chips = 1;
  for (std::int32_t c : slice) chips *= c;
  const std::int32_t per_chip = std::max(t.devices_per_chip, 1);
  const std::int32_t devices = m.devices > 0 ? m.devices : chips * per_chip;
  const bool parallel = m.parallel && per_chip > 1;
  if (devices != (parallel ? chips : chips * per_chip))
    throw fail(fmt::format("{} devices on {} chips of {} device{} each{}", devices, chips, per_chip,
                           per_chip == 1 ? "" : "s", parallel ? ", one per chip" : ""));
  if (devices < 2) throw fail("a collective needs 2 devices or more");
  auto p = std::make_shared<MeasuredProgram>();
  std::vector<std::int32_t> along;
  for (std::size_t a = 0; a < rank; ++a)
    if (slice[a] > 1) along.push_back(static_cast<std::int32_t>(a));
  // A parallel group runs on one TensorCore of each chip; the chips' others run a second one beside it.
  const Mesh mesh = parallel ? Mesh{{"x", devices}, {"c", per_chip}} : Mesh{{"x", devices}};
  if (along.empty()) along.push_back(0);
  p->layout = TorusLayout{.slice = slice,
                          .axes = parallel ? std::vector<std::vector<std::int32_t>>{along, {}}
                                           : std::vector<std::vector<std::int32_t>>{along},
                          .serpentine = true};  // a ring over a face or a cube: one hop a step
  switch (size_of(m.dtype)) {
    case 4: p->exe.emplace(measured_executable<float>(m, mesh)); break;
    case 2: p->exe.emplace(measured_executable<bf16>(m, mesh)); break;
    case 1: p->exe.emplace(measured_executable<std::int8_t>(m, mesh)); break;
    default: throw fail("calibrate takes elements of 1, 2 or 4 bytes");
  }
  // Left unwritten: predict_times moves no bytes, and a collective computes
  // on none, so pages of large arguments are never touched (nor resident).
  for (const Executable::Param& param : p->exe->params())
    p->args.push_back(Array::empty(p->exe->mesh().size(), param.type.dtype, param.type.shape));
  return p;
}

// The figures calibrate fits, as offsets into a Target.
struct FittedFigure {
  const char* name;
  double scale;  // of the fit's variable: microseconds, or a fraction of the peak
  bool CalibrateOptions::*on;
  double (*get)(const Target&);
  void (*set)(Target&, double);
};
inline const std::vector<FittedFigure>& fitted_figures() {
  static const std::vector<FittedFigure> f{
      {"ici.hop_latency_seconds", 1e-6, &CalibrateOptions::hop_latency,
       [](const Target& t) { return t.ici.hop_latency_seconds; },
       [](Target& t, double v) { t.ici.hop_latency_seconds = v; }},
      {"ici.working_link_bytes_per_second", 0, &CalibrateOptions::link_bandwidth,
       [](const Target& t) { return t.ici.link_rate(); },
       [](Target& t, double v) { t.ici.working_link_bytes_per_second = std::min(v, t.ici.link_bytes_per_second); }},
      {"dma_issue_seconds", 1e-6, &CalibrateOptions::dma_issue, [](const Target& t) { return t.dma_issue_seconds; },
       [](Target& t, double v) { t.dma_issue_seconds = v; }},
      {"ici.collective_fixed_seconds", 1e-6, &CalibrateOptions::collective_fixed,
       [](const Target& t) { return t.ici.collective_fixed_seconds; },
       [](Target& t, double v) { t.ici.collective_fixed_seconds = v; }},
  };
  return f;
}

// The fit's functor (Eigen's NonLinearOptimization): one relative error per point.
struct CalibrationFunctor {
  using Scalar = double;
  using InputType = Eigen::VectorXd;
  using ValueType = Eigen::VectorXd;
  using JacobianType = Eigen::MatrixXd;
  enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };

  const Target* base;
  std::vector<const FittedFigure*> figures;
  const std::vector<CalibrationPoint>* points;

  int inputs() const { return static_cast<int>(figures.size()); }
  int values() const { return static_cast<int>(points->size()); }
  // The variable x of a figure: microseconds for times; for the link, the
  // fraction of the peak (kept within (0, 1]).
  Target target(const Eigen::VectorXd& x) const {
    Target t = *base;
    for (std::size_t i = 0; i < figures.size(); ++i) {
      const double v = std::abs(x[static_cast<Eigen::Index>(i)]);
      const FittedFigure& f = *figures[i];
      f.set(t, f.scale > 0 ? v * f.scale : std::clamp(v, 1e-3, 1.0) * base->ici.link_bytes_per_second);
    }
    return t;
  }
  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& fvec) const {
    const Target t = target(x);
    for (std::size_t i = 0; i < points->size(); ++i) {
      const CalibrationPoint& p = (*points)[i];
      fvec[static_cast<Eigen::Index>(i)] = (p.predict(t) - p.measured_seconds) / p.measured_seconds;
    }
    return 0;
  }
};

inline std::string status_words(int s) {
  using namespace Eigen::LevenbergMarquardtSpace;
  switch (s) {
    case RelativeReductionTooSmall: return "converged (the relative reduction of the error is below tolerance)";
    case RelativeErrorTooSmall: return "converged (the figures changed less than the tolerance)";
    case RelativeErrorAndReductionTooSmall: return "converged (figures and error both within tolerance)";
    case CosinusTooSmall: return "converged (the errors are orthogonal to every figure's effect)";
    case FtolTooSmall:
    case XtolTooSmall:
    case GtolTooSmall: return "converged (no further improvement possible at machine precision)";
    case TooManyFunctionEvaluation: return "did not converge: too many evaluations (CalibrateOptions::max_evaluations)";
    default: return fmt::format("did not converge (Levenberg-Marquardt status {})", s);
  }
}

}  // namespace detail

inline std::vector<CalibrationPoint> calibration_points(const Target& t, const std::vector<Measurement>& measurements,
                                                        refx::source_location loc) {
  validate(t);
  std::vector<CalibrationPoint> points;
  for (const Measurement& m : measurements) {
    std::shared_ptr<detail::MeasuredProgram> p = detail::measured_program(t, m);
    points.push_back({m.label(), m.seconds, [p, loc](const Target& target) {
                        return detail::predict_times(*p->exe, target, p->layout, p->args, loc).seconds();
                      }});
  }
  return points;
}

inline Calibration calibrate(const Target& t, const std::vector<CalibrationPoint>& points, const CalibrateOptions& o) {
  validate(t);
  detail::CalibrationFunctor fn{&t, {}, &points};
  std::vector<std::string_view> names;
  for (const detail::FittedFigure& f : detail::fitted_figures())
    if (o.*f.on) {
      fn.figures.push_back(&f);
      names.push_back(f.name);
    }
  if (fn.figures.empty()) throw Error("refx: calibrate: CalibrateOptions turns every figure off: nothing to fit");
  if (points.size() < fn.figures.size())
    throw Error(fmt::format(
        "refx: calibrate: {} measurement{} cannot fit {} figures ({}): give at least {}, or turn figures off in "
        "CalibrateOptions",
        points.size(), points.size() == 1 ? "" : "s", fn.figures.size(), fmt::join(names, ", "), fn.figures.size()));
  for (const CalibrationPoint& p : points)
    if (!(p.measured_seconds > 0) || !std::isfinite(p.measured_seconds))
      throw Error(fmt::format("refx: calibrate: point '{}' has a measured time of {} s; a time is positive", p.label,
                              p.measured_seconds));
  if (o.max_evaluations < 1)
    throw Error(
        fmt::format("refx: calibrate: CalibrateOptions::max_evaluations is {}; give 1 or more", o.max_evaluations));
  // Start from the target's figures (a small positive one where it has none).
  Eigen::VectorXd x(static_cast<Eigen::Index>(fn.figures.size()));
  for (std::size_t i = 0; i < fn.figures.size(); ++i) {
    const detail::FittedFigure& f = *fn.figures[i];
    const double v = f.get(t);
    x[static_cast<Eigen::Index>(i)] = f.scale > 0 ? (v > 0 ? v / f.scale : 0.1) : v / t.ici.link_bytes_per_second;
  }
  Eigen::VectorXd before(static_cast<Eigen::Index>(points.size())), after = before;
  for (std::size_t i = 0; i < points.size(); ++i)  // with the target's own figures
    before[static_cast<Eigen::Index>(i)] = points[i].predict(t) / points[i].measured_seconds - 1;
  Eigen::NumericalDiff<detail::CalibrationFunctor> diff(fn);
  Eigen::LevenbergMarquardt<Eigen::NumericalDiff<detail::CalibrationFunctor>> lm(diff);
  lm.parameters.maxfev = o.max_evaluations;
  const int status = lm.minimize(x);
  fn(x, after);

  Calibration c;
  c.converged = status != Eigen::LevenbergMarquardtSpace::ImproperInputParameters &&
                status != Eigen::LevenbergMarquardtSpace::TooManyFunctionEvaluation &&
                after.squaredNorm() <= before.squaredNorm();
  c.status = detail::status_words(status);
  if (!c.converged && after.squaredNorm() > before.squaredNorm())
    c.status = "did not converge: the fit ended with larger errors than it started from";
  c.target = c.converged ? fn.target(x) : t;
  if (!c.converged) after = before;
  for (const detail::FittedFigure& f : detail::fitted_figures()) {
    const bool fitted = o.*f.on;
    c.figures.push_back({f.name, f.get(t), f.get(c.target), fitted && c.converged});
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto k = static_cast<Eigen::Index>(i);
    const double m = points[i].measured_seconds;
    c.residuals.push_back({points[i].label, m, m * (1 + before[k]), m * (1 + after[k])});
  }
  return c;
}

inline Calibration calibrate(const Target& t, const std::vector<Measurement>& measurements, const CalibrateOptions& o,
                             refx::source_location loc) {
  return calibrate(t, calibration_points(t, measurements, loc), o);
}

inline std::string Calibration::to_string() const {
  std::string s = fmt::format("calibrate on {}: {}\n", target.name, status);
  for (const Figure& f : figures) {
    const bool bandwidth = f.name.find("bytes_per_second") != std::string::npos;
    const auto show = [&](double v) {
      return bandwidth ? fmt::format("{:.4g} GB/s ({:.1f} % of the peak)", v / 1e9,
                                     100 * v / target.ici.link_bytes_per_second)
                       : fmt::format("{:.4g} us", v * 1e6);
    };
    s += fmt::format("  {:<34} {:>30} -> {:<30}{}\n", f.name, show(f.before), show(f.after),
                     f.fitted ? "" : " (not fitted)");
  }
  s += fmt::format("  {:<40} {:>14} {:>22} {:>22}\n", "measurement", "measured (us)", "uncalibrated (us, err)",
                   "calibrated (us, err)");
  for (const Residual& r : residuals)
    s +=
        fmt::format("  {:<40} {:>14.3f} {:>13.3f} {:>+7.1f}% {:>13.3f} {:>+7.1f}%\n", r.label, r.measured * 1e6,
                    r.before * 1e6, 100 * (r.before / r.measured - 1), r.after * 1e6, 100 * (r.after / r.measured - 1));
  return s;
}

}  // namespace refx
