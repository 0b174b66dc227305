#pragma once
// Chrome Trace Event JSON of one recorded launch (runtime/timeline.hpp,
// docs/runtime.md "Timeline"): its device lanes with op slices, copy lanes
// with a slice per copy or chunk, flows from copies to waits, and semaphore
// counters.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include <refx/ir/printer.hpp>
#include <refx/runtime/detail/launch_timeline.hpp>

namespace refx::detail {

/// The length of the well-formed UTF-8 sequence at s[i] (no overlong forms,
/// surrogates or code points above U+10FFFF), or 0 when there is none.
inline std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) n = 2;
  else if (b >= 0xe0 && b <= 0xef) n = 3, lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
  else if (b >= 0xf0 && b <= 0xf4) n = 4, lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if (c < (k == 1 ? lo : 0x80u) || c > (k == 1 ? hi : 0xbfu)) return 0;
  }
  return n;
}

/// `s` as a JSON string; a byte that is not part of well-formed UTF-8 (a
/// user's name in another encoding) becomes U+FFFD, so the file stays valid.
inline void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  out += '"';
}
inline std::string json_quoted(std::string_view s) {
  std::string out;
  json_string(out, s);
  return out;
}
/// Microseconds (the format's unit) with nanosecond digits and 0.3 ns more,
/// so that a reader that truncates to nanoseconds and one that rounds both
/// get exactly `ns` (adjacent slices must not overlap by a nanosecond).
inline std::string json_us(std::int64_t ns) {
  ns = std::max<std::int64_t>(ns, 0);
  return fmt::format("{}.{:03}3", ns / 1000, ns % 1000);
}

/// "dma_wait recv 'r'"-style slice names: the primitive, then the user's names.
inline std::string timeline_op_name(const Graph& g, const Op& op) {
  std::string s(op.prim->name);
  ValueId last = no_id;
  for (ViewId v : g.views(op)) {
    const ValueId ref = g.view(v).ref;
    if (ref == last) continue;
    last = ref;
    if (auto n = g.name(ref); !n.empty()) fmt::format_to(std::back_inserter(s), " {}", n);
  }
  for (ValueId v : g.outputs(op))
    if (auto n = g.name(v); !n.empty()) fmt::format_to(std::back_inserter(s), " -> {}", n);
  return s;
}

// Lane ids: devices are their own ids; the cores of a device with several
// (Mesh::with_cores) come after them, then the copy lanes.
inline constexpr std::int64_t core_lane_base = 500'000, worker_lane_base = 1'000'000, host_lane_base = 2'000'000;
inline std::int64_t device_lane_tid(const Mesh& m, std::int64_t lane) {
  if (m.cores() == 1) return lane;
  return core_lane_base + (lane / m.cores()) * Mesh::max_cores + lane % m.cores();
}
inline std::int64_t copy_lane_tid(std::int32_t lane) {
  return lane >= 0 ? worker_lane_base + lane : host_lane_base + (-1 - lane);
}
inline std::string lane_name(std::int64_t tid) {
  if (tid < core_lane_base) return fmt::format("device {}", tid);
  if (tid < worker_lane_base)
    return fmt::format("device {} core {}", (tid - core_lane_base) / Mesh::max_cores,
                       (tid - core_lane_base) % Mesh::max_cores);
  if (tid < host_lane_base) return fmt::format("copy engine: worker {}", tid - worker_lane_base);
  return fmt::format("copy engine: host thread {}", tid - host_lane_base);
}

/// A time inside [begin, end] but off its ends, where a flow binds to the slice.
inline std::int64_t inside(std::int64_t t, std::int64_t begin, std::int64_t end) {
  return end - begin < 2 ? begin : std::clamp(t, begin + 1, end - 1);
}

inline void launch_json(const LaunchTimeline& t, std::string& out,
                        std::set<std::pair<std::uint64_t, std::int64_t>>& lanes, std::int64_t& next_flow) {
  const Program& p = t.program();
  const Graph& g = p.graph;
  const std::uint64_t pid = t.runtime();
  std::unordered_map<const Op*, std::string> names;
  const auto name_of = [&](const Op* op) -> const std::string& {
    auto [it, fresh] = names.try_emplace(op);
    if (fresh) it->second = json_quoted(timeline_op_name(g, *op));
    return it->second;
  };
  const auto event = [&](std::string_view body) {
    out += out.back() == '[' ? "\n" : ",\n";
    out += body;
  };
  const std::string kernel = json_quoted(p.name);
  const auto& lanes_of = t.lanes();
  const auto tid_of = [&](std::int64_t lane) { return device_lane_tid(p.mesh, lane); };
  for (std::size_t lane = 0; lane < lanes_of.size(); ++lane) {
    const LaunchTimeline::Lane& l = lanes_of[lane];
    if (l.first < 0) continue;
    const std::int64_t d = tid_of(static_cast<std::int64_t>(lane));
    lanes.emplace(pid, d);
    // The launch encloses the device's ops by a nanosecond each side, so that
    // viewers nest them whatever order they sort equal timestamps in.
    event(fmt::format(
        R"({{"ph":"X","cat":"kernel","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"launch":{},"mesh":{}{}}}}})",
        kernel, pid, d, json_us(l.first - 1), json_us(l.last - l.first + 2), t.number(), json_quoted(p.mesh.describe()),
        t.error().empty() ? "" : ",\"error\":" + json_quoted(t.error())));
    for (const LaunchTimeline::OpSlice& s : l.slices)
      event(fmt::format(
          R"({{"ph":"X","cat":"op","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"op":{},"source":{}{}}}}})",
          name_of(s.op), pid, d, json_us(s.begin), json_us(s.end - s.begin), json_quoted(s.op->prim->name),
          json_quoted(fmt::format("{}", s.op->loc)), s.parked ? ",\"parked\":true" : ""));
    for (const TimelineCopy& c : l.copies) {
      const std::string_view kind = c.reduce == CopyReduce::sum   ? "copy+sum"
                                    : c.reduce == CopyReduce::max ? "copy+max"
                                                                  : "copy";
      for (std::size_t i = 0; i < c.pieces.size(); ++i) {
        const TimelineCopy::Piece& piece = c.pieces[i];
        if (piece.end < 0) continue;
        const std::int64_t tid = copy_lane_tid(piece.lane);
        lanes.emplace(pid, tid);
        event(fmt::format(
            R"({{"ph":"X","cat":"copy","name":"{} {}->{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"bytes":{},"copy_bytes":{},"chunk":"{}/{}","from_device":{},"to_device":{},"source":{},"kernel":{}}}}})",
            kind, c.source, c.target, pid, tid, json_us(piece.begin), json_us(piece.end - piece.begin), piece.bytes,
            c.bytes, i + 1, c.pieces.size(), c.source, c.target, json_quoted(fmt::format("{}", c.op->loc)), kernel));
      }
    }
  }
  for (const LaunchTimeline::Flow& f : t.flows()) {
    const auto& from = lanes_of[static_cast<std::size_t>(f.copy->source)].slices[f.copy->start_slice];
    const auto& to = lanes_of[static_cast<std::size_t>(f.device)].slices[f.slice];
    const std::int64_t id = next_flow++;
    event(fmt::format(R"({{"ph":"s","cat":"copy","name":"copy","id":{},"pid":{},"tid":{},"ts":{}}})", id, pid,
                      tid_of(f.copy->source), json_us(inside(f.copy->started, from.begin, from.end))));
    event(fmt::format(R"({{"ph":"f","bp":"e","cat":"copy","name":"copy","id":{},"pid":{},"tid":{},"ts":{}}})", id, pid,
                      tid_of(f.device), json_us(inside(f.at, to.begin, to.end))));
  }
  for (std::size_t d = 0; d < lanes_of.size(); ++d)
    for (const LaunchTimeline::Traced& v : lanes_of[d].values) {  // trace_value: a counter track per label
      const auto lane = static_cast<std::int32_t>(d);
      const std::string name = fmt::format("{} {}", p.mesh.describe_lane(lane), g.string(g.attrs(*v.op)[0]));
      if (std::isfinite(v.value))
        event(
            fmt::format(R"({{"ph":"C","cat":"trace_value","name":{},"pid":{},"tid":{},"ts":{},"args":{{"value":{}}}}})",
                        json_quoted(name), pid, tid_of(lane), json_us(v.at), v.value));
      else  // not a number a counter can show
        event(fmt::format(R"({{"ph":"i","s":"t","cat":"trace_value","name":{},"pid":{},"tid":{},"ts":{}}})",
                          json_quoted(fmt::format("{} = {}", name, v.value)), pid, tid_of(lane), json_us(v.at)));
    }
  for (const LaunchTimeline::Sample& s : t.samples()) {
    const std::string sem = semaphore_name(g, s.sem) + (g.type(s.sem).shape.rank() ? fmt::format("[{}]", s.index) : "");
    event(fmt::format(R"({{"ph":"C","name":{},"pid":{},"tid":{},"ts":{},"args":{{"value":{}}}}})",
                      json_quoted(fmt::format("{} {}", p.mesh.describe_lane(s.device), sem)), pid, tid_of(s.device),
                      json_us(s.at), s.value));
  }
}

}  // namespace refx::detail
