#pragma once
// The observer interface of a launch (Taskflow's ObserverInterface is the
// model): hooks a tool implements to watch ops, signals, waits and copies
// without an edit to the scheduler. The timeline (launch_timeline.hpp) and
// the race detector (race_detector.hpp) are the two built in; both adapters
// are here. A launch without observers calls none of this: it tests one
// flag per signal, wait and copy, and nothing per op.

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/ir/eval.hpp>
#include <refx/runtime/detail/copy_job.hpp>
#include <refx/runtime/detail/launch_timeline.hpp>
#include <refx/runtime/detail/race_detector.hpp>

namespace refx::detail {

/// Every hook has an empty default. The "device thread" hooks run on the
/// thread running that device, without the launch's lock; the others run
/// under the launch's lock (they must not block).
class LaunchObserver {
 public:
  virtual ~LaunchObserver() = default;

  // ---- on the device's thread
  /// Device `d` is about to run `op` (compute ops, waits, starts, effects).
  virtual void on_op(std::int32_t /*d*/, ExecContext& /*c*/, const Op& /*op*/) {}
  /// The run of device `d` returned: finished, failed, or parked (`blocked`).
  virtual void on_device_stopped(std::int32_t /*d*/, bool /*blocked*/) {}
  /// Device `d` started `job` (filled in, not yet moved) at `op`.
  virtual void on_copy(std::int32_t /*d*/, const Op& /*op*/, CopyJob& /*job*/) {}

  // ---- under the launch's lock
  /// `from` added to the counter of (target, sem, index), now `value`.
  virtual void on_signal(std::int32_t /*from*/, std::int32_t /*target*/, ValueId /*sem*/, std::int64_t /*index*/,
                         const std::int64_t& /*counter*/) {}
  /// Device `d` took `taken` from a counter; its wait returns.
  virtual void on_wait(std::int32_t /*d*/, const std::int64_t& /*counter*/, std::int64_t /*taken*/, ValueId /*sem*/,
                       std::int64_t /*index*/) {}
  /// `job`'s bytes landed and its semaphores rose.
  virtual void on_copy_landed(const CopyJob& /*job*/) {}

  // ---- once, without the lock, when the launch ends
  /// May set `error` (a finding of the tool) when there is none yet; sees the
  /// final error otherwise. Observers end in the order they were attached.
  virtual void on_end(const Program& /*p*/, std::exception_ptr& /*error*/) {}
};

/// The observers of one launch, called in order.
class Observers {
 public:
  explicit Observers(std::vector<std::unique_ptr<LaunchObserver>> list) : list_(std::move(list)) {}
  bool any() const noexcept { return !list_.empty(); }
  template <class F>
  void each(F&& f) const {
    for (const auto& o : list_) f(*o);
  }

 private:
  std::vector<std::unique_ptr<LaunchObserver>> list_;
};

/// The happens-before race detector, watching: releases on signals and copy
/// landings, acquires on waits, accesses per op and per copy.
class RaceObserver final : public LaunchObserver {
 public:
  explicit RaceObserver(const Mesh& mesh) : races_(mesh) {}

  void on_op(std::int32_t d, ExecContext& c, const Op& op) override {
    if (op.prim == &prim::dma_start || op.prim == &prim::dma_wait) return;  // copies log themselves
    for (const Effect& e : c.graph().effects(op)) {
      if (e.view == no_id || !(e.bits & (effect_read | effect_write | effect_accum))) continue;
      const bool write = (e.bits & (effect_write | effect_accum)) != 0;
      races_.access(d, c.resolve(e.view, op.loc), write, write ? "write" : "read", op.loc);
    }
  }
  void on_copy(std::int32_t d, const Op& op, CopyJob& job) override {
    job.race_thread = races_.copy_begin(d);
    races_.copy_access(job.race_thread, job.src, job.dst, d, job.target, op.loc);
  }
  void on_signal(std::int32_t from, std::int32_t, ValueId, std::int64_t, const std::int64_t& counter) override {
    races_.release(from, &counter);
  }
  void on_wait(std::int32_t d, const std::int64_t& counter, std::int64_t, ValueId, std::int64_t) override {
    races_.acquire(d, &counter);
  }
  void on_copy_landed(const CopyJob& job) override {
    races_.release(job.race_thread, job.recv_counter);
    if (job.send_counter) races_.release(job.race_thread, job.send_counter);
  }
  void on_end(const Program& p, std::exception_ptr& error) override {
    if (error) return;
    if (auto found = races_.races(); !found.empty())
      error = std::make_exception_ptr(RuntimeError(fmt::format(
          "refx: data race in kernel '{}': unordered conflicting accesses (order them with a semaphore or a "
          "copy wait):\n  {}",
          p.name, fmt::join(found, "\n  "))));
  }

 private:
  RaceDetector races_;
};

/// The timeline, recording: op slices, copies and their chunks, semaphore
/// values and copy-to-wait flows. At the end the recording goes to `done`.
class TimelineObserver final : public LaunchObserver {
 public:
  using Done = std::function<void(std::unique_ptr<LaunchTimeline>, const std::exception_ptr&)>;
  TimelineObserver(std::unique_ptr<LaunchTimeline> t, Done done) : t_(std::move(t)), done_(std::move(done)) {}

  void on_op(std::int32_t d, ExecContext& c, const Op& op) override {
    t_->op_begins(d, op);
    if (op.prim == &prim::trace_value) t_->traced_value(d, op, c.in(op, 0).as_double(0));
  }
  void on_device_stopped(std::int32_t d, bool blocked) override { t_->device_stopped(d, blocked); }
  void on_copy(std::int32_t d, const Op& op, CopyJob& job) override { job.trace = t_->copy_started(d, op, job); }
  void on_signal(std::int32_t, std::int32_t target, ValueId sem, std::int64_t index,
                 const std::int64_t& counter) override {
    t_->semaphore(target, sem, index, counter);
  }
  void on_wait(std::int32_t d, const std::int64_t& counter, std::int64_t taken, ValueId sem,
               std::int64_t index) override {
    t_->waited(d, counter, taken, sem, index);
  }
  void on_copy_landed(const CopyJob& job) override {
    if (job.trace) t_->copy_completed(job);
  }
  void on_end(const Program&, std::exception_ptr& error) override { done_(std::move(t_), error); }

 private:
  std::unique_ptr<LaunchTimeline> t_;
  Done done_;
};

}  // namespace refx::detail
