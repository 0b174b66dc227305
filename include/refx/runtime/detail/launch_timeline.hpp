#pragma once
// The recording of one launch for the timeline (runtime/timeline.hpp,
// docs/runtime.md "Timeline"): a lane per device with a slice per op, the
// copies each device started with their chunks, semaphore values, the values
// of trace_value, and a flow from each copy to the wait that took its last
// byte. TimelineObserver
// (launch_observer.hpp) feeds it.
//
// Recording is buffered per launch and, inside it, per device: a device's op
// slices and the copies it starts are appended only by the thread running
// that device, each chunk task writes its own slot, and what changes under
// the launch's lock anyway (semaphore values, which wait takes which copy's
// bytes) is recorded under it. A finished launch is handed to the runtime's
// recorders once. When nothing records, the launch has no observer.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <refx/runtime/detail/copy_job.hpp>
#include <refx/runtime/event.hpp>
#include <refx/runtime/program.hpp>
#include <refx/runtime/worker_pool.hpp>

namespace refx::detail {

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
  std::int64_t started = 0;     // when dma_start handed it over
  std::size_t start_slice = 0;  // the dma_start slice on the source device's lane
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
  const std::int64_t begin = timeline_now();
  move();
  TimelineCopy::Piece& p = trace->pieces[i];
  p.lane = copy_lane(pool);
  p.begin = begin;
  p.end = std::max(timeline_now(), begin + 1);
}

/// The recording of one launch (see the file comment for who writes what).
class LaunchTimeline {
 public:
  struct OpSlice {
    const Op* op = nullptr;
    std::int64_t begin = 0, end = -1;  // end < 0: open
    bool parked = false;               // a wait the device parked on
  };
  struct Traced {  // a trace_value
    const Op* op;
    std::int64_t at;
    double value;
  };
  struct Lane {
    std::vector<OpSlice> slices;
    std::vector<Traced> values;
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
      : program_(std::move(program)),
        runtime_(runtime),
        workers_(workers),
        lanes_(static_cast<std::size_t>(program_->mesh.lanes())) {}

  void set_number(std::int64_t n) noexcept { number_ = n; }

  // ---- on the device's own thread
  /// Closes the device's open slice and opens one for `op`, unless the device
  /// is resuming the wait it parked on (that slice spans the parking).
  void op_begins(std::int32_t d, const Op& op) {
    Lane& l = lane(d);
    std::int64_t now = timeline_now();
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
    const std::int64_t now = timeline_now();
    if (!l.slices.empty() && l.slices.back().end < 0) {
      OpSlice& open = l.slices.back();
      if (blocked) open.parked = l.blocked = true;
      else open.end = std::max(now, open.begin + 2);
    }
    l.last = std::max(l.last, now);
  }
  void traced_value(std::int32_t d, const Op& op, double value) {
    lane(d).values.push_back(Traced{&op, timeline_now(), value});
  }
  TimelineCopy* copy_started(std::int32_t d, const Op& op, const CopyJob& job) {
    Lane& l = lane(d);
    TimelineCopy& c = l.copies.emplace_back();
    c.op = &op;
    c.source = d;
    c.target = job.target;
    c.bytes = job.bytes;
    c.reduce = job.reduce;
    c.started = timeline_now();
    c.start_slice = l.slices.empty() ? 0 : l.slices.size() - 1;
    c.chunked(1, job.bytes);
    return &c;
  }

  // ---- under the launch's lock
  void semaphore(std::int32_t d, ValueId sem, std::int64_t index, std::int64_t value) {
    samples_.push_back(Sample{timeline_now(), d, sem, index, value});
  }
  /// A copy landed: its semaphores rose; its bytes wait in line to be taken.
  void copy_completed(const CopyJob& job) {
    semaphore(job.target, job.recv_sem, job.recv_index, *job.recv_counter);
    unclaimed_[job.recv_counter].push_back(Unclaimed{job.trace, job.recv_inc});
    if (job.send_counter) {
      semaphore(job.source, job.send_sem, job.send_index, *job.send_counter);
      unclaimed_[job.send_counter].push_back(Unclaimed{job.trace, job.send_inc});
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
    const std::int64_t now = timeline_now();
    for (Lane& l : lanes_) {
      for (OpSlice& s : l.slices)
        if (s.end < 0) s.end = std::max(now, s.begin + 2);
      if (!l.slices.empty()) l.last = std::max(l.last, l.slices.back().end);
    }
    unclaimed_.clear();
    if (error) error_ = message_of(error, "unknown exception");
  }

  /// How many trace events this launch writes (for the recorders' limit).
  std::size_t events() const {
    std::size_t n = samples_.size() + 2 * flows_.size();
    for (const Lane& l : lanes_) {
      n += l.slices.size() + l.values.size() + 1;
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

}  // namespace refx::detail
