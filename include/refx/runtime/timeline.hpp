#pragma once
// A timeline of runs on the threaded runtime, as Chrome Trace Event JSON
// (chrome://tracing, ui.perfetto.dev; docs/runtime.md, "Timeline"): one lane
// per device with one slice per op inside a slice per launch, one lane per
// thread that moved bytes with one slice per copy or chunk, a flow arrow from
// each copy's start to the wait that took its last byte, and every
// semaphore's value over time as a counter. Here: the finished recording
// (Timeline), the recorders a Runtime hands finished launches to, and
// REFX_TRACE_FILE's recording of the whole process. One launch's recording
// is detail/launch_timeline.hpp; its JSON, detail/timeline_json.hpp.

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <refx/runtime/detail/timeline_json.hpp>

namespace refx {

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
  std::string json() const {
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
          R"json({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"refx runtime {} ({} workers)"}}}})json",
          pid, pid, workers));
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

  /// Writes json() to `path`; throws refx::Error naming the path and the reason.
  void write(const std::string& path) const {
    const std::string text = json();
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr)
      throw Error(fmt::format("refx: cannot write the timeline to '{}': {}", path, std::strerror(errno)));
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int saved = errno;
    if (std::fclose(f) != 0 || !ok)
      throw Error(fmt::format("refx: cannot write the timeline to '{}': {}", path, std::strerror(ok ? errno : saved)));
  }

 private:
  std::vector<std::shared_ptr<const detail::LaunchTimeline>> launches_;
  std::int64_t dropped_ = 0;
};

namespace detail {
/// Where finished launches go while a recording is on (one per Runtime API
/// recording, one for REFX_TRACE_FILE); thread-safe, one lock per launch.
class TimelineRecorder {
 public:
  /// Launches are kept until about this many events; later ones are dropped.
  static constexpr std::size_t event_limit = 2'000'000;

  TimelineRecorder() { timeline_now(); }  // the clock's epoch: before anything recorded

  void add(std::shared_ptr<const detail::LaunchTimeline> t) {
    std::lock_guard lock(mutex_);
    if (events_ >= event_limit) {
      ++dropped_;
      return;
    }
    events_ += t->events();
    launches_.push_back(std::move(t));
  }
  bool full() const {
    std::lock_guard lock(mutex_);
    return events_ >= event_limit;
  }
  Timeline take() {
    std::lock_guard lock(mutex_);
    Timeline t(std::move(launches_), dropped_);
    launches_.clear();
    events_ = 0;
    dropped_ = 0;
    return t;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const detail::LaunchTimeline>> launches_;
  std::size_t events_ = 0;
  std::int64_t dropped_ = 0;
};

/// REFX_TRACE_FILE: one recording for every runtime of the process, written
/// at exit (static destruction, after Runtime::global(), which is constructed
/// after it). A "{}" in the path becomes the process id.
class ProcessTimeline {
 public:
  ProcessTimeline() {
    const char* env = std::getenv("REFX_TRACE_FILE");
    if (env == nullptr || *env == '\0') return;
    path_ = env;
    if (const auto at = path_.find("{}"); at != std::string::npos) path_.replace(at, 2, std::to_string(::getpid()));
    // Fail now, where the user sees it, rather than silently at exit.
    std::FILE* f = std::fopen(path_.c_str(), "a");
    if (f == nullptr) {
      fmt::print(stderr, "refx: REFX_TRACE_FILE: cannot write '{}': {}; no timeline is recorded\n", path_,
                 std::strerror(errno));
      return;
    }
    std::fclose(f);
    recorder_ = std::make_shared<TimelineRecorder>();
  }
  ProcessTimeline(const ProcessTimeline&) = delete;
  ProcessTimeline& operator=(const ProcessTimeline&) = delete;
  ~ProcessTimeline() {
    if (!recorder_) return;
    try {
      const Timeline t = recorder_->take();
      t.write(path_);
      if (t.dropped_launches() > 0)
        fmt::print(stderr, "refx: REFX_TRACE_FILE: {} launches past the limit of {} events were not recorded\n",
                   t.dropped_launches(), TimelineRecorder::event_limit);
    } catch (const std::exception& e) {
      fmt::print(stderr, "refx: REFX_TRACE_FILE: {}\n", e.what());
    }
  }
  const std::shared_ptr<TimelineRecorder>& recorder() const noexcept { return recorder_; }

 private:
  std::string path_;
  std::shared_ptr<TimelineRecorder> recorder_;
};

inline const std::shared_ptr<TimelineRecorder>& process_timeline() {
  static ProcessTimeline timeline;
  return timeline.recorder();
}
}  // namespace detail

}  // namespace refx
