#pragma once
// The definitions of tune.hpp (inline: a program that tunes includes it).

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <numeric>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/core/detail/delimited.hpp>
#include <refx/core/error.hpp>

namespace refx {

inline std::int64_t TuneConfig::operator[](std::string_view name) const {
  for (const auto& [n, v] : values_)
    if (n == name) return v;
  std::vector<std::string_view> names;
  for (const auto& [n, v] : values_) names.push_back(n);
  throw Error(fmt::format("refx: TuneConfig {{{}}} has no value named '{}' (it has {})", label(), name,
                          names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
}
inline bool TuneConfig::has(std::string_view name) const noexcept {
  return std::any_of(values_.begin(), values_.end(), [&](const auto& p) { return p.first == name; });
}
inline std::string TuneConfig::label() const {
  std::string s;
  for (const auto& [n, v] : values_) s += fmt::format("{}{}={}", s.empty() ? "" : " ", n, v);
  return s;
}

inline std::vector<TuneConfig> tune_grid(const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& axes) {
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].second.empty()) throw Error(fmt::format("refx: tune_grid: axis '{}' has no values", axes[a].first));
    for (std::size_t b = 0; b < a; ++b)
      if (axes[b].first == axes[a].first)
        throw Error(fmt::format("refx: tune_grid: axis '{}' is named twice", axes[a].first));
  }
  std::vector<TuneConfig> out;
  TuneConfig::Values v(axes.size());
  const auto fill = [&](auto& self, std::size_t a) -> void {
    if (a == axes.size()) {
      out.emplace_back(v);
      return;
    }
    for (std::int64_t x : axes[a].second) {
      v[a] = {axes[a].first, x};
      self(self, a + 1);
    }
  };
  if (!axes.empty()) fill(fill, 0);
  return out;
}

inline std::vector<Array> Tunable::make_args(const Executable& exe) const {
  if (args_) return args_(exe);
  std::vector<Array> args;
  for (const Executable::Param& p : exe.params()) {
    Array a = Array::empty(exe.mesh().size(), p.type.dtype, p.type.shape);
    for (std::int32_t d = 0; d < a.num_devices(); ++d)
      if (a.is_local(d)) a.shard(d).fill_zero();
    args.push_back(std::move(a));
  }
  return args;
}

namespace detail {

inline const char* rule_name(TargetViolation::Rule r) {
  switch (r) {
    case TargetViolation::Rule::tiling: return "tiling";
    case TargetViolation::Rule::capacity: return "capacity";
    case TargetViolation::Rule::element_type: return "element type";
    case TargetViolation::Rule::matmul_type: return "matmul type";
    case TargetViolation::Rule::mesh: return "mesh";
    case TargetViolation::Rule::semaphore: return "semaphore";
  }
  return "?";
}

/// One configuration, checked and (if feasible) predicted.
inline TuneEntry tune_one(const TuneConfig& c, const std::function<Tunable(const TuneConfig&)>& family, const Target& t,
                          bool keep) {
  TuneEntry e;
  e.config = c;
  std::optional<Executable> exe;
  std::optional<Tunable> tunable;
  try {
    tunable.emplace(family(c));
    exe.emplace(tunable->compile(t));
  } catch (const std::exception& x) {
    e.rule = "trace";
    e.reason = x.what();
    return e;
  }
  const TargetReport& r = exe->target_report();
  e.vmem_peak_bytes = r.vmem_peak_bytes;
  e.vmem_limit_bytes = r.vmem_limit_bytes;
  if (!r.ok()) {
    const TargetViolation& v = r.violations.front();
    e.rule = rule_name(v.rule);
    e.reason = v.message;
    if (v.rule == TargetViolation::Rule::capacity) e.over_bytes = v.needed_bytes - v.limit_bytes;
    return e;
  }
  try {
    const Prediction p = predict(*exe, t, tunable->torus_layout(), tunable->make_args(*exe));
    e.feasible = true;
    e.seconds = p.seconds();
    for (const DevicePrediction& d : p.devices)
      if (d.seconds == e.seconds) e.exposed_communication_seconds = d.exposed_communication_seconds;
    if (keep) e.prediction = std::make_shared<const Prediction>(p);
  } catch (const std::exception& x) {
    e.rule = "predict";
    e.reason = x.what();
  }
  return e;
}

inline std::string microseconds(double s) { return fmt::format("{:.3f}", s * 1e6); }

/// Where a value would fall among `sorted`'s, averaged over ties (1-based).
inline std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;
    i = j + 1;
  }
  return r;
}

}  // namespace detail

inline TuneResult tune(const std::vector<TuneConfig>& configs, const std::function<Tunable(const TuneConfig&)>& family,
                       const Target& t, const TuneOptions& o) {
  validate(t);
  if (configs.empty()) throw Error("refx: tune: no configurations to tune (tune_grid of no axes?)");
  if (o.threads < 0)
    throw Error(fmt::format("refx: tune: TuneOptions::threads is {}; give 0 (all) or more", o.threads));
  std::vector<TuneEntry> out(configs.size());
  std::atomic<std::size_t> next{0}, done{0}, infeasible{0};
  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < configs.size();) {
      out[i] = detail::tune_one(configs[i], family, t, o.keep_predictions);
      if (!out[i].feasible) infeasible.fetch_add(1);
      done.fetch_add(1);
    }
  };
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads =
      std::min<std::size_t>(configs.size(), o.threads == 0 ? hw : static_cast<unsigned>(o.threads));
  const bool progress = o.progress == TuneOptions::Progress::on ||
                        (o.progress == TuneOptions::Progress::automatic && ::isatty(STDERR_FILENO) != 0);
  const auto start = std::chrono::steady_clock::now();
  const auto line = [&] {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fputs(fmt::format("\rtune on {}: {}/{} configurations, {} infeasible, {:.1f} s", t.name, done.load(),
                           configs.size(), infeasible.load(), s)
                   .c_str(),
               stderr);
  };
  {
    std::vector<std::jthread> pool;
    for (std::size_t k = 1; k < threads; ++k) pool.emplace_back(work);
    if (progress) {
      std::jthread ticker([&](std::stop_token stop) {
        while (!stop.stop_requested() && done.load() < configs.size()) {
          line();
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
      });
      work();
      pool.clear();
    } else {
      work();
    }
  }
  if (progress) {
    line();
    std::fputs("\n", stderr);
  }
  TuneResult r;
  r.target = t.name;
  std::vector<std::size_t> order(out.size());
  std::iota(order.begin(), order.end(), 0);
  // Compared in whole picoseconds: predictions that differ only in the
  // rounding of their sums are a tie, kept in the configurations' order.
  const auto ps = [](double s) { return std::llround(s * 1e12); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (out[a].feasible != out[b].feasible) return out[a].feasible;
    return out[a].feasible && ps(out[a].seconds) < ps(out[b].seconds);
  });
  for (std::size_t i : order) r.entries.push_back(std::move(out[i]));
  return r;
}

inline std::size_t TuneResult::feasible_count() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(entries.begin(), entries.end(), [](const TuneEntry& e) { return e.feasible; }));
}
inline const TuneEntry& TuneResult::best() const {
  if (entries.empty() || !entries.front().feasible)
    throw Error(fmt::format("refx: tune on {}: none of the {} configurations is feasible", target, entries.size()));
  return entries.front();
}
inline const TuneEntry* TuneResult::find(const TuneConfig& c) const noexcept {
  for (const TuneEntry& e : entries)
    if (e.config == c) return &e;
  return nullptr;
}

inline std::string TuneResult::to_string(std::size_t rows) const {
  const std::size_t feasible = feasible_count();
  std::size_t width = 13;
  for (const TuneEntry& e : entries) width = std::max(width, e.config.label().size());
  std::string s = fmt::format("tune on {}: {} configurations, {} feasible\n", target, entries.size(), feasible);
  if (feasible > 0) {
    s += fmt::format("{:>4}  {:<{}}  {:>14}  {:>12}  {:>12}  {:>12}\n", "rank", "configuration", width,
                     "predicted (us)", "vs best", "Vmem peak", "headroom");
    for (std::size_t i = 0; i < feasible && i < rows; ++i) {
      const TuneEntry& e = entries[i];
      s += fmt::format("{:>4}  {:<{}}  {:>14}  {:>11.2f}x  {:>12}  {:>12}\n", i + 1, e.config.label(), width,
                       detail::microseconds(e.seconds), e.seconds / entries[0].seconds,
                       detail::human_bytes(e.vmem_peak_bytes), detail::human_bytes(e.headroom_bytes()));
    }
    if (feasible > rows) s += fmt::format("      ({} more feasible)\n", feasible - rows);
  }
  for (std::size_t i = feasible; i < entries.size(); ++i) {
    const TuneEntry& e = entries[i];
    s += fmt::format("   -  {:<{}}  infeasible ({}{}): {}\n", e.config.label(), width, e.rule,
                     e.over_bytes > 0 ? fmt::format(", {} over", detail::human_bytes(e.over_bytes)) : "",
                     e.reason.substr(0, e.reason.find(" (at ")));
  }
  return s;
}

inline std::string TuneResult::to_csv() const {
  std::vector<std::string> names;
  for (const TuneEntry& e : entries)
    for (const auto& [n, v] : e.config.values())
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::string s = fmt::format("# refx::tune,{}\nrank", detail::csv_field(target));
  for (const std::string& n : names) s += "," + detail::csv_field(n);
  s += ",feasible,predicted_seconds,vmem_peak_bytes,vmem_limit_bytes,headroom_bytes,rule,over_bytes,reason,"
       "measured_seconds\n";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const TuneEntry& e = entries[i];
    s += e.feasible ? fmt::format("{}", i + 1) : "";
    for (const std::string& n : names) s += e.config.has(n) ? fmt::format(",{}", e.config[n]) : ",";
    s += fmt::format(",{},{},{},{},{},{},{},{},{}\n", e.feasible ? 1 : 0,
                     e.feasible ? fmt::format("{:.9g}", e.seconds) : "", e.vmem_peak_bytes, e.vmem_limit_bytes,
                     e.headroom_bytes(), detail::csv_field(e.rule), e.over_bytes, detail::csv_field(e.reason),
                     e.measured_seconds ? fmt::format("{:.9g}", *e.measured_seconds) : "");
  }
  return s;
}

inline void TuneResult::write_csv(const std::string& path) const {
  std::ofstream f(path, std::ios::binary);
  f << to_csv();
  if (!f.flush()) throw Error(fmt::format("refx: TuneResult::write_csv: cannot write '{}'", path));
}

inline TuneResult TuneResult::from_csv(std::string_view text, std::string_view source) {
  const std::vector<detail::DelimitedRow> rows = detail::parse_delimited(text, ',', source);
  TuneResult r;
  std::size_t first = 0;
  if (!rows.empty() && !rows[0].fields.empty() && rows[0].fields[0] == "# refx::tune") {
    if (rows[0].fields.size() > 1) r.target = rows[0].fields[1];
    first = 1;
  }
  if (rows.size() <= first) throw Error(fmt::format("refx: {}: no header line (rank,...,measured_seconds)", source));
  const std::vector<std::string>& head = rows[first].fields;
  const auto column = [&](std::string_view name) -> std::size_t {
    const auto it = std::find(head.begin(), head.end(), name);
    if (it == head.end())
      throw Error(fmt::format("refx: {}:{}: the header has no column '{}'", source, rows[first].line, name));
    return static_cast<std::size_t>(it - head.begin());
  };
  const std::size_t feasible = column("feasible"), predicted = column("predicted_seconds"),
                    peak = column("vmem_peak_bytes"), limit = column("vmem_limit_bytes"), rule = column("rule"),
                    over = column("over_bytes"), reason = column("reason"), measured = column("measured_seconds");
  if (head.empty() || head[0] != "rank" || feasible < 1)
    throw Error(fmt::format("refx: {}:{}: the header must start with rank, then the configuration's names", source,
                            rows[first].line));
  for (std::size_t i = first + 1; i < rows.size(); ++i) {
    const detail::DelimitedRow& row = rows[i];
    if (row.fields.size() != head.size())
      throw Error(fmt::format("refx: {}:{}: {} fields, and the header has {}", source, row.line, row.fields.size(),
                              head.size()));
    const auto number = [&](std::size_t c, bool optional) -> std::optional<double> {
      const std::string& f = row.fields[c];
      if (f.empty()) {
        if (optional) return std::nullopt;
        throw Error(fmt::format("refx: {}:{}: field '{}' is empty", source, row.line, head[c]));
      }
      const std::optional<double> v = detail::parse_number(f);
      if (!v) throw Error(fmt::format("refx: {}:{}: field '{}' is '{}', not a number", source, row.line, head[c], f));
      return v;
    };
    TuneEntry e;
    TuneConfig::Values values;
    for (std::size_t c = 1; c < feasible; ++c)
      if (const auto v = number(c, true)) values.emplace_back(head[c], static_cast<std::int64_t>(*v));
    e.config = TuneConfig(std::move(values));
    e.feasible = *number(feasible, false) != 0;
    if (e.feasible) e.seconds = *number(predicted, false);
    e.vmem_peak_bytes = static_cast<std::int64_t>(*number(peak, false));
    e.vmem_limit_bytes = static_cast<std::int64_t>(*number(limit, false));
    e.rule = row.fields[rule];
    e.over_bytes = static_cast<std::int64_t>(*number(over, false));
    e.reason = row.fields[reason];
    e.measured_seconds = number(measured, true);
    if (e.measured_seconds && *e.measured_seconds <= 0)
      throw Error(fmt::format("refx: {}:{}: field 'measured_seconds' is {}; a time is positive", source, row.line,
                              *e.measured_seconds));
    r.entries.push_back(std::move(e));
  }
  return r;
}

inline TuneResult TuneResult::read_csv(const std::string& path) {
  return from_csv(detail::read_text_file(path, "TuneResult::read_csv"), path);
}

inline std::string TuneResult::measured_report() const {
  std::vector<const TuneEntry*> m;
  for (const TuneEntry& e : entries)
    if (e.feasible && e.measured_seconds) m.push_back(&e);
  if (m.empty()) return fmt::format("tune on {}: no configuration has a measured time\n", target);
  std::size_t width = 13;
  for (const TuneEntry* e : m) width = std::max(width, e->config.label().size());
  std::string s = fmt::format("tune on {}: {} configurations measured\n{:<{}}  {:>14}  {:>13}  {:>9}\n", target,
                              m.size(), "configuration", width, "predicted (us)", "measured (us)", "meas/pred");
  std::vector<double> pred, meas;
  for (const TuneEntry* e : m) {
    s += fmt::format("{:<{}}  {:>14}  {:>13}  {:>9.3f}\n", e->config.label(), width, detail::microseconds(e->seconds),
                     detail::microseconds(*e->measured_seconds), *e->measured_seconds / e->seconds);
    pred.push_back(e->seconds);
    meas.push_back(*e->measured_seconds);
  }
  if (m.size() >= 2) {
    const std::vector<double> a = detail::ranks(pred), b = detail::ranks(meas);
    const double mean = (static_cast<double>(m.size()) + 1) / 2;
    double num = 0, da = 0, db = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      num += (a[i] - mean) * (b[i] - mean);
      da += (a[i] - mean) * (a[i] - mean);
      db += (b[i] - mean) * (b[i] - mean);
    }
    const double rho = da > 0 && db > 0 ? num / std::sqrt(da * db) : 0;
    const auto fastest = static_cast<std::size_t>(std::min_element(meas.begin(), meas.end()) - meas.begin());
    s += fmt::format(
        "Spearman rank correlation of predicted and measured: {:.3f}; the fastest measured ({}) is predicted rank "
        "{} of {}\n",
        rho, m[fastest]->config.label(), static_cast<int>(a[fastest]), m.size());
  }
  return s;
}

}  // namespace refx
