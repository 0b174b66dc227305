#pragma once
// A timeline of runs on the threaded runtime, as Chrome Trace Event JSON
// (chrome://tracing, ui.perfetto.dev; docs/runtime.md, "Timeline"): one lane
// per device with one slice per op inside a slice per launch, one lane per
// thread that moved bytes with one slice per copy or chunk, a flow arrow from
// each copy's start to the wait that took its last byte, and every
// semaphore's value over time as a counter.
//
// Recording is buffered per launch and, inside it, per device: a device's op
// slices and the copies it starts are appended only by the thread running
// that device, each chunk task writes its own slot, and what changes under
// the launch's lock anyway (semaphore values, which wait takes which copy's
// bytes) is recorded under it. A finished launch is handed to the runtime's
// recorders once. When nothing records, the runtime pays one null-pointer
// test per device run, copy, signal and wait, and nothing per op.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include <refx/runtime/copy_engine.hpp>
#include <refx/runtime/program.hpp>
#include <refx/runtime/worker_pool.hpp>

namespace refx {

namespace detail {
/// Nanoseconds on the steady clock since the process's first recording.
inline std::int64_t timeline_now() noexcept {
  static const auto epoch = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - epoch).count();
}

/// The lane of the thread running a copy: a worker of `pool` (>= 0), or a
/// host thread helping while it waits (-1 - its number in the process).
inline std::int32_t copy_lane(const WorkerPool& pool) {
  if (const int w = pool.worker_index(); w >= 0) return w;
  static std::atomic<std::int32_t> next{0};
  thread_local const std::int32_t host = next.fetch_add(1, std::memory_order_relaxed);
  return -1 - host;
}
}  // namespace detail

/// One copy started during a recorded launch; its pieces are the whole copy
/// or its chunks, each written by the task that moves it.
struct TimelineCopy {
  struct Piece {
    std::int64_t begin = 0, end = -1, bytes = 0;  // end < 0: never ran
    std::int32_t lane = 0;
  };
  const Op* op = nullptr;
  std::int32_t source = 0, target = 0;
  std::int64_t bytes = 0;
  CopyReduce reduce = CopyReduce::none;
  std::int64_t started = 0;      // when dma_start handed it over
  std::size_t start_slice = 0;   // the dma_start slice on the source device's lane
  std::vector<Piece> pieces;

  /// Splits the record into `n` chunks of `chunk_bytes` (the last one shorter).
  void chunked(int n, std::int64_t chunk_bytes) {
    pieces.assign(static_cast<std::size_t>(n), Piece{});
    for (std::size_t i = 0; i < pieces.size(); ++i)
      pieces[i].bytes = std::min(chunk_bytes, bytes - static_cast<std::int64_t>(i) * chunk_bytes);
  }
};

/// Runs `move` (a whole copy or chunk `i` of one), timing it into `trace` when recording.
template <class F>
inline void timed_copy(TimelineCopy* trace, std::size_t i, const WorkerPool& pool, F&& move) {
  if (trace == nullptr) {
    move();
    return;
  }
  const std::int64_t begin = detail::timeline_now();
  move();
  TimelineCopy::Piece& p = trace->pieces[i];
  p.lane = detail::copy_lane(pool);
  p.begin = begin;
  p.end = std::max(detail::timeline_now(), begin + 1);
}

/// The recording of one launch (see the file comment for who writes what).
class LaunchTimeline {
 public:
  struct OpSlice {
    const Op* op = nullptr;
    std::int64_t begin = 0, end = -1;  // end < 0: open
    bool parked = false;               // a wait the device parked on
  };
  struct Lane {
    std::vector<OpSlice> slices;
    std::deque<TimelineCopy> copies;  // started by this device (stable addresses)
    bool blocked = false;             // the open slice is the wait it parked on
    std::int64_t first = -1, last = 0;
  };
  struct Flow {
    const TimelineCopy* copy;
    std::int32_t device;  // the waiting device
    std::size_t slice;    // its wait slice
    std::int64_t at;      // when the wait took the copy's last byte
  };
  struct Sample {
    std::int64_t at;
    std::int32_t device;
    ValueId sem;
    std::int64_t index, value;
  };

  LaunchTimeline(std::shared_ptr<const Program> program, std::uint64_t runtime, unsigned workers)
      : program_(std::move(program)), runtime_(runtime), workers_(workers),
        lanes_(static_cast<std::size_t>(program_->mesh.size())) {}

  void set_number(std::int64_t n) noexcept { number_ = n; }

  // ---- on the device's own thread
  /// Closes the device's open slice and opens one for `op`, unless the device
  /// is resuming the wait it parked on (that slice spans the parking).
  void op_begins(std::int32_t d, const Op& op) {
    Lane& l = lane(d);
    std::int64_t now = detail::timeline_now();
    if (!l.slices.empty() && l.slices.back().end < 0) {
      OpSlice& open = l.slices.back();
      if (l.blocked && open.op == &op) {
        l.blocked = false;
        return;
      }
      // At least 2 ns, so that a flow bound to the slice fits strictly inside.
      open.end = now = std::max(now, open.begin + 2);
    }
    l.blocked = false;
    if (l.first < 0) l.first = now;
    l.slices.push_back(OpSlice{&op, now, -1, false});
  }
  /// The device's run returned: it finished, failed or parked (`blocked`).
  void device_stopped(std::int32_t d, bool blocked) {
    Lane& l = lane(d);
    const std::int64_t now = detail::timeline_now();
    if (!l.slices.empty() && l.slices.back().end < 0) {
      OpSlice& open = l.slices.back();
      if (blocked) open.parked = l.blocked = true;
      else open.end = std::max(now, open.begin + 2);
    }
    l.last = std::max(l.last, now);
  }
  TimelineCopy* copy_started(std::int32_t d, const Op& op, const CopyJob& job) {
    Lane& l = lane(d);
    TimelineCopy& c = l.copies.emplace_back();
    c.op = &op;
    c.source = d;
    c.target = job.target;
    c.bytes = job.bytes;
    c.reduce = job.reduce;
    c.started = detail::timeline_now();
    c.start_slice = l.slices.empty() ? 0 : l.slices.size() - 1;
    c.chunked(1, job.bytes);
    return &c;
  }

  // ---- under the launch's lock
  void semaphore(std::int32_t d, ValueId sem, std::int64_t index, std::int64_t value) {
    samples_.push_back(Sample{detail::timeline_now(), d, sem, index, value});
  }
  /// A copy landed: its semaphores rose; its bytes wait in line to be taken.
  void copy_completed(const CopyJob& job) {
    semaphore(job.target, job.recv_sem, job.recv_index, *job.recv_counter);
    unclaimed_[job.recv_counter].push_back(Unclaimed{job.trace, job.bytes});
    if (job.send_counter) {
      semaphore(job.source, job.send_sem, job.send_index, *job.send_counter);
      unclaimed_[job.send_counter].push_back(Unclaimed{job.trace, job.bytes});
    }
  }
  /// Device `d` took `taken` from a counter: the copies whose last byte that
  /// was (in the order they landed) get a flow to its wait slice.
  void waited(std::int32_t d, const std::int64_t& counter, std::int64_t taken, ValueId sem, std::int64_t index) {
    semaphore(d, sem, index, counter);
    const auto it = unclaimed_.find(&counter);
    if (it == unclaimed_.end()) return;
    const std::size_t slice = lane(d).slices.empty() ? 0 : lane(d).slices.size() - 1;
    for (auto& line = it->second; taken > 0 && !line.empty();) {
      Unclaimed& u = line.front();
      const std::int64_t part = std::min(taken, u.left);
      u.left -= part;
      taken -= part;
      if (u.left > 0) break;
      flows_.push_back(Flow{u.copy, d, slice, samples_.back().at});
      line.pop_front();
    }
  }
  /// The launch completed: closes what is still open (devices released by a
  /// failure while parked) and keeps the failure's message.
  void finish(const std::exception_ptr& error) {
    const std::int64_t now = detail::timeline_now();
    for (Lane& l : lanes_) {
      for (OpSlice& s : l.slices)
        if (s.end < 0) s.end = std::max(now, s.begin + 2);
      if (!l.slices.empty()) l.last = std::max(l.last, l.slices.back().end);
    }
    unclaimed_.clear();
    if (!error) return;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      error_ = e.what();
    } catch (...) {
      error_ = "unknown exception";
    }
  }

  /// How many trace events this launch writes (for the recorders' limit).
  std::size_t events() const {
    std::size_t n = samples_.size() + 2 * flows_.size();
    for (const Lane& l : lanes_) {
      n += l.slices.size() + 1;
      for (const TimelineCopy& c : l.copies) n += c.pieces.size();
    }
    return n;
  }

  const Program& program() const noexcept { return *program_; }
  std::uint64_t runtime() const noexcept { return runtime_; }
  unsigned workers() const noexcept { return workers_; }
  std::int64_t number() const noexcept { return number_; }
  const std::string& error() const noexcept { return error_; }
  const std::vector<Lane>& lanes() const noexcept { return lanes_; }
  const std::vector<Flow>& flows() const noexcept { return flows_; }
  const std::vector<Sample>& samples() const noexcept { return samples_; }

 private:
  struct Unclaimed {
    const TimelineCopy* copy;
    std::int64_t left;
  };
  Lane& lane(std::int32_t d) { return lanes_[static_cast<std::size_t>(d)]; }

  std::shared_ptr<const Program> program_;  // keeps the ops the slices point to
  std::uint64_t runtime_;
  unsigned workers_;
  std::int64_t number_ = 0;
  std::vector<Lane> lanes_;
  std::vector<Flow> flows_;
  std::vector<Sample> samples_;
  std::unordered_map<const std::int64_t*, std::deque<Unclaimed>> unclaimed_;
  std::string error_;
};

namespace detail {
inline void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
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

// Lane ids: devices are their own ids; copy lanes come after them.
inline constexpr std::int64_t worker_lane_base = 1'000'000, host_lane_base = 2'000'000;
inline std::int64_t copy_lane_tid(std::int32_t lane) {
  return lane >= 0 ? worker_lane_base + lane : host_lane_base + (-1 - lane);
}
inline std::string lane_name(std::int64_t tid) {
  if (tid < worker_lane_base) return fmt::format("device {}", tid);
  if (tid < host_lane_base) return fmt::format("copy engine: worker {}", tid - worker_lane_base);
  return fmt::format("copy engine: host thread {}", tid - host_lane_base);
}

/// A time inside [begin, end] but off its ends, where a flow binds to the slice.
inline std::int64_t inside(std::int64_t t, std::int64_t begin, std::int64_t end) {
  return end - begin < 2 ? begin : std::clamp(t, begin + 1, end - 1);
}

inline void launch_json(const LaunchTimeline& t, std::string& out, std::set<std::pair<std::uint64_t, std::int64_t>>& lanes,
                        std::int64_t& next_flow) {
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
  for (std::size_t d = 0; d < lanes_of.size(); ++d) {
    const LaunchTimeline::Lane& l = lanes_of[d];
    if (l.first < 0) continue;
    lanes.emplace(pid, static_cast<std::int64_t>(d));
    // The launch encloses the device's ops by a nanosecond each side, so that
    // viewers nest them whatever order they sort equal timestamps in.
    event(fmt::format(R"({{"ph":"X","cat":"kernel","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"launch":{},"mesh":{}{}}}}})",
                      kernel, pid, d, json_us(l.first - 1), json_us(l.last - l.first + 2), t.number(),
                      json_quoted(p.mesh.describe()), t.error().empty() ? "" : ",\"error\":" + json_quoted(t.error())));
    for (const LaunchTimeline::OpSlice& s : l.slices)
      event(fmt::format(R"({{"ph":"X","cat":"op","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"op":{},"source":{}{}}}}})",
                        name_of(s.op), pid, d, json_us(s.begin), json_us(s.end - s.begin),
                        json_quoted(s.op->prim->name), json_quoted(fmt::format("{}", s.op->loc)),
                        s.parked ? ",\"parked\":true" : ""));
    for (const TimelineCopy& c : l.copies) {
      const std::string_view kind = c.reduce == CopyReduce::sum ? "copy+sum" : c.reduce == CopyReduce::max ? "copy+max" : "copy";
      for (std::size_t i = 0; i < c.pieces.size(); ++i) {
        const TimelineCopy::Piece& piece = c.pieces[i];
        if (piece.end < 0) continue;
        const std::int64_t tid = copy_lane_tid(piece.lane);
        lanes.emplace(pid, tid);
        event(fmt::format(R"({{"ph":"X","cat":"copy","name":"{} {}->{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"bytes":{},"copy_bytes":{},"chunk":"{}/{}","from_device":{},"to_device":{},"source":{},"kernel":{}}}}})",
                          kind, c.source, c.target, pid, tid, json_us(piece.begin), json_us(piece.end - piece.begin),
                          piece.bytes, c.bytes, i + 1, c.pieces.size(), c.source, c.target,
                          json_quoted(fmt::format("{}", c.op->loc)), kernel));
      }
    }
  }
  for (const LaunchTimeline::Flow& f : t.flows()) {
    const auto& from = lanes_of[static_cast<std::size_t>(f.copy->source)].slices[f.copy->start_slice];
    const auto& to = lanes_of[static_cast<std::size_t>(f.device)].slices[f.slice];
    const std::int64_t id = next_flow++;
    event(fmt::format(R"({{"ph":"s","cat":"copy","name":"copy","id":{},"pid":{},"tid":{},"ts":{}}})", id, pid,
                      f.copy->source, json_us(inside(f.copy->started, from.begin, from.end))));
    event(fmt::format(R"({{"ph":"f","bp":"e","cat":"copy","name":"copy","id":{},"pid":{},"tid":{},"ts":{}}})", id, pid,
                      f.device, json_us(inside(f.at, to.begin, to.end))));
  }
  for (const LaunchTimeline::Sample& s : t.samples()) {
    const std::string sem = semaphore_name(g, s.sem) + (g.type(s.sem).shape.rank() ? fmt::format("[{}]", s.index) : "");
    event(fmt::format(R"({{"ph":"C","name":{},"pid":{},"tid":{},"ts":{},"args":{{"value":{}}}}})",
                      json_quoted(fmt::format("device {} {}", s.device, sem)), pid, s.device, json_us(s.at), s.value));
  }
}
}  // namespace detail

/// A finished recording: the launches it covers, as Chrome Trace Event JSON.
class Timeline {
 public:
  Timeline() = default;
  Timeline(std::vector<std::shared_ptr<const LaunchTimeline>> launches, std::int64_t dropped)
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
      event(fmt::format(R"json({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"refx runtime {} ({} workers)"}}}})json", pid,
                        pid, workers));
      event(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", pid, pid));
    }
    for (const auto& [pid, tid] : lanes) {
      event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})", pid, tid,
                        detail::lane_name(tid)));
      event(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid, tid,
                        tid));
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
  std::vector<std::shared_ptr<const LaunchTimeline>> launches_;
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

  void add(std::shared_ptr<const LaunchTimeline> t) {
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
  std::vector<std::shared_ptr<const LaunchTimeline>> launches_;
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
