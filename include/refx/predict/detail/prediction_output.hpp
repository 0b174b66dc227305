#pragma once
// The definitions of Prediction's printing and its predicted timeline
// (predict.hpp; the timeline in docs/runtime.md's Chrome-trace format, in
// modelled microseconds).

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>

#include <fmt/format.h>

#include <refx/core/error.hpp>
#include <refx/runtime/detail/timeline_json.hpp>

namespace refx {

namespace detail {
/// Seconds as trace microseconds with picosecond digits (deterministic text).
inline std::string predicted_us(double seconds) { return fmt::format("{:.6f}", seconds * 1e6); }
}  // namespace detail

REFX_DECL double Prediction::seconds() const {
  double s = 0;
  for (const DevicePrediction& d : devices) s = std::max(s, d.seconds);
  return s;
}

REFX_DECL std::string Prediction::to_string() const {
  std::string out =
      fmt::format("predicted on {} (mesh {} on a {} slice): kernel '{}' takes {:.3f} us (its slowest device)\n", target,
                  mesh, slice, kernel, seconds() * 1e6);
  out += "device    total_us     busy_us  waiting_us  exposed_comm_us  copies  bytes_sent\n";
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const DevicePrediction& p = devices[d];
    fmt::format_to(std::back_inserter(out), "{:>6} {:>11.3f} {:>11.3f} {:>11.3f} {:>16.3f} {:>7} {:>11}\n", d,
                   p.seconds * 1e6, p.busy_seconds * 1e6, p.waiting_seconds * 1e6,
                   p.exposed_communication_seconds * 1e6, p.copies, p.bytes_sent);
  }
  for (const UnknownCost& u : unknown)
    fmt::format_to(std::back_inserter(out), "not modelled (counted as 0 s): {} at {}, {} time(s): {}\n", u.op, u.source,
                   u.count, u.reason);
  return out;
}

namespace detail {
inline const Op& predicted_op(const Program* p, OpId op) {
  if (p == nullptr || op < 0 || static_cast<std::size_t>(op) >= p->graph.num_ops())
    throw Error(fmt::format("refx: Prediction: op {} is not an op of the predicted program{}", op,
                            p == nullptr ? " (this Prediction was not made by refx::predict)" : ""));
  return p->graph.op(op);
}
}  // namespace detail

REFX_DECL std::string Prediction::op_name(OpId op) const {
  const Op& o = detail::predicted_op(program_.get(), op);
  return detail::timeline_op_name(program_->graph, o);
}
REFX_DECL std::string Prediction::op_source(OpId op) const {
  return fmt::format("{}", detail::predicted_op(program_.get(), op).loc);
}

REFX_DECL std::string Prediction::timeline_json() const {
  std::string out = "{\"traceEvents\":[";
  const auto event = [&](std::string_view body) {
    out += out.back() == '[' ? "\n" : ",\n";
    out += body;
  };
  const std::string name = detail::json_quoted(kernel);
  const std::int64_t pid = 1;
  for (std::size_t d = 0; d < ops.size(); ++d) {
    event(fmt::format(
        R"({{"ph":"X","cat":"kernel","name":{},"pid":{},"tid":{},"ts":0.000000,"dur":{},"args":{{"mesh":{},"target":{}}}}})",
        name, pid, d, detail::predicted_us(devices[d].seconds), detail::json_quoted(mesh),
        detail::json_quoted(target)));
    for (const PredictedOp& o : ops[d])
      event(fmt::format(
          R"({{"ph":"X","cat":"op","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"source":{}{}}}}})",
          detail::json_quoted(op_name(o.op)), pid, d, detail::predicted_us(o.begin),
          detail::predicted_us(o.end - o.begin), detail::json_quoted(op_source(o.op)),
          o.waited ? ",\"waited\":true" : ""));
  }
  for (const PredictedCopy& c : copies)
    event(fmt::format(
        R"({{"ph":"X","cat":"copy","name":"copy {}->{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"bytes":{},"hops":{},"issued_us":{},"source":{}}}}})",
        c.from, c.to, pid, detail::worker_lane_base + c.from, detail::predicted_us(c.start),
        detail::predicted_us(c.arrival - c.start), c.bytes, c.hops, detail::predicted_us(c.issued),
        detail::json_quoted(op_source(c.op))));
  event(fmt::format(R"json({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})json", pid,
                    detail::json_quoted(fmt::format("refx prediction: {} on {} (modelled time)", kernel, target))));
  for (std::size_t d = 0; d < ops.size(); ++d) {
    event(
        fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"device {}"}}}})", pid, d, d));
    event(
        fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"copies from device {}"}}}})",
                    pid, detail::worker_lane_base + static_cast<std::int64_t>(d), d));
    event(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid,
                      detail::worker_lane_base + static_cast<std::int64_t>(d), ops.size() + d));
  }
  fmt::format_to(std::back_inserter(out),
                 "\n],\"otherData\":{{\"generator\":\"refx predict\",\"target\":{},\"predicted_us\":{}}}}}\n",
                 detail::json_quoted(target), detail::predicted_us(seconds()));
  return out;
}

REFX_DECL void Prediction::write_timeline(const std::string& path) const {
  const std::string text = timeline_json();
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr)
    throw Error(fmt::format("refx: cannot write the predicted timeline to '{}': {}", path, std::strerror(errno)));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved = errno;
  if (std::fclose(f) != 0 || !ok)
    throw Error(
        fmt::format("refx: cannot write the predicted timeline to '{}': {}", path, std::strerror(ok ? errno : saved)));
}

}  // namespace refx
