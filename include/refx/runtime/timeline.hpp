#pragma once
// A timeline of runs on the threaded runtime, as Chrome Trace Event JSON
// (chrome://tracing, ui.perfetto.dev; docs/runtime.md, "Timeline"): one lane
// per device with one slice per op inside a slice per launch, one lane per
// thread that moved bytes with one slice per copy or chunk, a flow arrow from
// each copy's start to the wait that took its last byte, and every
// semaphore's value over time as a counter. Here: the finished recording
// (Timeline). The recorders a Runtime hands finished launches to, and
// REFX_TRACE_FILE's recording of the whole process, are
// detail/timeline_recorder.hpp; one launch's recording is
// detail/launch_timeline.hpp; its JSON, detail/timeline_json.hpp.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <refx/config.hpp>

namespace refx {

namespace detail {
class LaunchTimeline;  // detail/launch_timeline.hpp
}  // namespace detail

/// A finished recording: the launches it covers, as Chrome Trace Event JSON.
class Timeline {
 public:
  Timeline() = default;
  Timeline(std::vector<std::shared_ptr<const detail::LaunchTimeline>> launches, std::int64_t dropped)
      : launches_(std::move(launches)), dropped_(dropped) {}

  /// Launches recorded; launches past the event limit are counted, not kept.
  std::size_t launches() const noexcept { return launches_.size(); }
  std::int64_t dropped_launches() const noexcept { return dropped_; }

  /// The JSON document ({"traceEvents": [...], "otherData": {...}}). No
  /// "displayTimeUnit": Perfetto would take it as the unit of the timestamps.
  std::string json() const;

  /// Writes json() to `path`; throws refx::Error naming the path and the reason.
  void write(const std::string& path) const;

 private:
  std::vector<std::shared_ptr<const detail::LaunchTimeline>> launches_;
  std::int64_t dropped_ = 0;
};

}  // namespace refx

#if REFX_DEFINITIONS
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include <refx/core/error.hpp>
#include <refx/runtime/detail/timeline_json.hpp>

namespace refx {

REFX_DECL std::string Timeline::json() const {
  std::string out = "{\"traceEvents\":[";
  std::set<std::pair<std::uint64_t, std::int64_t>> lanes;
  std::set<std::pair<std::uint64_t, unsigned>> runtimes;
  std::int64_t next_flow = 1;
  for (const auto& t : launches_) {
    detail::launch_json(*t, out, lanes, next_flow);
    runtimes.emplace(t->runtime(), t->workers());
  }
  const auto event = [&](std::string_view body) {
    out += out.back() == '[' ? "\n" : ",\n";
    out += body;
  };
  for (const auto& [pid, workers] : runtimes) {
    event(fmt::format(
        R"json({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"refx runtime {} ({} workers)"}}}})json", pid,
        pid, workers));
    event(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", pid, pid));
  }
  for (const auto& [pid, tid] : lanes) {
    event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})", pid, tid,
                      detail::lane_name(tid)));
    event(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid,
                      tid, tid));
  }
  fmt::format_to(std::back_inserter(out),
                 "\n],\"otherData\":{{\"generator\":\"refx\",\"launches\":{},"
                 "\"dropped_launches\":{}}}}}\n",
                 launches_.size(), dropped_);
  return out;
}

REFX_DECL void Timeline::write(const std::string& path) const {
  const std::string text = json();
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw Error(fmt::format("refx: cannot write the timeline to '{}': {}", path, std::strerror(errno)));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved = errno;
  if (std::fclose(f) != 0 || !ok)
    throw Error(fmt::format("refx: cannot write the timeline to '{}': {}", path, std::strerror(ok ? errno : saved)));
}

}  // namespace refx
#endif  // REFX_DEFINITIONS
