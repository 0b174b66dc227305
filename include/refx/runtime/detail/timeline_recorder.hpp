#pragma once
// Where a Runtime's finished launches go while a recording is on
// (TimelineRecorder: one per start_timeline() recording, one for
// REFX_TRACE_FILE), and REFX_TRACE_FILE's recording of the whole process.
// The finished recording, Timeline, is refx/runtime/timeline.hpp.

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <refx/runtime/detail/launch_timeline.hpp>
#include <refx/runtime/timeline.hpp>

namespace refx {

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
