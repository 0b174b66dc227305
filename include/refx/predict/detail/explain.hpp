#pragma once
// The definition of Prediction::explain() (predict.hpp): a device's
// predicted time taken apart, step by step, from the ops and copies the
// model recorded.

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include <refx/core/error.hpp>

namespace refx {

namespace detail {
inline std::string explain_us(double s) { return fmt::format("{:.2f} us", s * 1e6); }
inline std::string explain_rate(double bytes_per_second) { return fmt::format("{:.4g} GB/s", bytes_per_second / 1e9); }

/// One step: a wait that blocked, and what it waited for.
struct ExplainedStep {
  const PredictedOp* wait = nullptr;
  double compute = 0;  // busy time since the previous step
};
}  // namespace detail

REFX_DECL std::string Prediction::explain(std::int32_t device) const {
  if (devices.empty()) return "explain: an empty prediction\n";
  std::int32_t slowest = 0;
  for (std::size_t d = 1; d < devices.size(); ++d)
    if (devices[d].seconds > devices[static_cast<std::size_t>(slowest)].seconds) slowest = static_cast<std::int32_t>(d);
  if (device < 0) device = slowest;
  if (static_cast<std::size_t>(device) >= devices.size())
    throw Error(fmt::format("refx: Prediction::explain: device {} is not one of the {} devices of the prediction",
                            device, devices.size()));
  const DevicePrediction& dp = devices[static_cast<std::size_t>(device)];
  const Figures& f = figures;
  std::string out = fmt::format(
      "explain: kernel '{}' on {} (mesh {} on a {} slice): device {} takes {}{}\n"
      "  links {} per direction working (peak {}), {} per hop; a copy's issue {}, the collective's fixed cost {}\n",
      kernel, target, mesh, slice, device, detail::explain_us(dp.seconds), device == slowest ? " (the slowest)" : "",
      detail::explain_rate(f.link_working), detail::explain_rate(f.link_peak), detail::explain_us(f.hop_latency),
      detail::explain_us(f.dma_issue), detail::explain_us(f.collective_fixed));

  std::vector<detail::ExplainedStep> steps;
  double compute = 0;
  for (const PredictedOp& o : ops[static_cast<std::size_t>(device)]) {
    if (o.waited) {
      steps.push_back({&o, compute});
      compute = 0;
    } else {
      compute += o.end - o.begin;
    }
  }
  struct Totals {
    double waited = 0, serial = 0, serial_peak = 0, hops = 0, contention = 0, hidden = 0, handshakes = 0;
    std::int64_t short_of_ring = 0, copies = 0;
  } total;
  constexpr std::size_t shown = 16;
  if (steps.empty()) out += "  no wait blocked: the device never waited for a copy or a signal\n";
  else out += fmt::format("  {:>4}  {:<34} {:>11}  what ended the wait\n", "step", "wait (source)", "blocked");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const PredictedOp& w = *steps[i].wait;
    const double blocked = w.end - w.begin;
    total.waited += blocked;
    std::string what;
    if (w.woken_by_copy >= 0 && static_cast<std::size_t>(w.woken_by_copy) < copies.size()) {
      const PredictedCopy& c = copies[static_cast<std::size_t>(w.woken_by_copy)];
      const bool ici = c.hops > 0;
      const double serial = c.serialisation, hops = static_cast<double>(c.hops) * f.hop_latency;
      const double peak = ici ? static_cast<double>(c.bytes) / f.link_peak : serial;
      const double contention = c.start - c.issued;
      const double hidden = std::max(0.0, (c.arrival - c.issued) - blocked);
      ++total.copies;
      total.serial += serial;
      total.serial_peak += peak;
      total.hops += hops;
      total.contention += contention;
      total.hidden += hidden;
      what = fmt::format("copy {}->{} of {} (at {}): {} on the {}{}", c.from, c.to, detail::human_bytes(c.bytes),
                         op_source(c.op), detail::explain_us(serial), ici ? "links" : "HBM",
                         ici ? fmt::format(" ({} at peak)", detail::explain_us(peak)) : "");
      if (ici) what += fmt::format(" + {} hop{} {}", c.hops, c.hops == 1 ? "" : "s", detail::explain_us(hops));
      if (contention > 0) what += fmt::format(" + {} queued behind other transfers", detail::explain_us(contention));
      if (c.ring_hops < c.hops) {
        total.short_of_ring += c.hops - c.ring_hops;
        what += fmt::format("; {} hops where wraparound links would make {} (rings close at multiples of {} chips)",
                            c.hops, c.ring_hops, f.wraparound_multiple);
      }
      what += fmt::format("; compute beside it hid {}", detail::explain_us(hidden));
    } else if (w.woken_by_device >= 0) {
      total.handshakes += blocked;
      what = fmt::format("a signal from device {} (a handshake: its hops and whatever that device did first)",
                         w.woken_by_device);
    } else {
      what = "a count reached by the device's own ops";
    }
    if (i < shown)
      out += fmt::format("  {:>4}  {:<34} {:>11}  {}\n", i + 1, op_source(w.op), detail::explain_us(blocked), what);
  }
  if (steps.size() > shown) out += fmt::format("  ... {} more steps\n", steps.size() - shown);
  out += fmt::format("  total: busy {} (compute and copy issue), waiting {} in {} blocked waits{}\n",
                     detail::explain_us(dp.busy_seconds), detail::explain_us(dp.waiting_seconds), steps.size(),
                     dp.fixed_seconds > 0 ? fmt::format(", fixed cost {}", detail::explain_us(dp.fixed_seconds)) : "");
  if (total.copies > 0) {
    out += fmt::format(
        "  the {} copies waited for: serialisation {} ({} at the peak link rate), hops {}, queued {}, hidden by "
        "compute {}\n",
        total.copies, detail::explain_us(total.serial), detail::explain_us(total.serial_peak),
        detail::explain_us(total.hops), detail::explain_us(total.contention), detail::explain_us(total.hidden));
    if (total.short_of_ring > 0)
      out += fmt::format("  a missing wraparound cost {} extra hops ({})\n", total.short_of_ring,
                         detail::explain_us(static_cast<double>(total.short_of_ring) * f.hop_latency));
  }
  if (total.handshakes > 0)
    out += fmt::format("  waiting for signals (handshakes): {}\n", detail::explain_us(total.handshakes));
  return out;
}

}  // namespace refx
