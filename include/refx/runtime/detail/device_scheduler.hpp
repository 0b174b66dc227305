#pragma once
// The device scheduler of one launch: which devices are queued, running,
// parked or done; the ready queue and the runner tasks that drain it; park
// and wake-up; copies in flight; and deadlock / idle detection. A device is
// state, not a thread: a pool task runs it (Owner::run_device) until it
// finishes or blocks; a blocked device parks, and a signal or a landed copy
// that satisfies its wait queues it again. The scheduler's mutex is the
// launch's one lock: it guards every semaphore and scheduling state of the
// launch, which makes deadlock detection exact (nothing queued or running,
// no copy in flight, and some device parked).

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/ir/graph.hpp>
#include <refx/runtime/detail/semaphore_names.hpp>
#include <refx/runtime/program.hpp>
#include <refx/runtime/worker_pool.hpp>

namespace refx::detail {

enum class DeviceState : std::uint8_t { absent, queued, running, parked, done };

/// What a parked device waits for (for wake-ups and deadlock reports).
struct Park {
  const Op* op = nullptr;
  const std::int64_t* counter = nullptr;
  std::int64_t wanted = 0;
  ValueId sem = no_id;
  std::int64_t index = 0;
};

/// `Owner` runs devices (`run_device(d)`) and is kept alive by the pool tasks
/// that do (`shared_from_this()`).
template <class Owner>
class DeviceScheduler {
 public:
  DeviceScheduler(Owner& owner, WorkerPool& pool, LaunchStats& stats) : owner_(owner), pool_(pool), stats_(stats) {}

  std::mutex& mutex() const noexcept { return mutex_; }

  /// 0: every run of a device is its own pool task; else at most this many
  /// runner tasks drain the ready queue (see push_locked).
  void set_max_runners(int n) noexcept { max_runners_ = n; }
  /// `n` device slots, all absent until hosted.
  void resize(std::int32_t n) {
    slots_.assign(static_cast<std::size_t>(n), Slot{});
    ready_head_ = ready_tail_ = -1;
  }
  void host(std::int32_t d) { slot(d).state = DeviceState::queued; }
  void unhost_all() {
    for (Slot& s : slots_) s = Slot{};
  }
  /// Every hosted device counts as active (queued) from now on.
  void activate_hosted_locked() {
    active_ = 0;
    for (const Slot& s : slots_) active_ += s.state != DeviceState::absent;
  }
  bool hosted(std::int32_t d) const { return slot(d).state != DeviceState::absent; }
  bool done(std::int32_t d) const { return slot(d).state == DeviceState::done; }
  std::int32_t size() const noexcept { return static_cast<std::int32_t>(slots_.size()); }

  /// Queues every hosted device. With no more devices than workers, the
  /// calling thread (a pool task) runs devices itself instead of handing them
  /// all to other threads: one hand-off less per launch. It becomes the first
  /// runner, or runs the first device while the others go to the pool (unless
  /// the pool's shuffled order is to pick). With more devices, a pushed runner
  /// is usually taken by the host thread waiting for the launch, which keeps
  /// the devices' state in one core's cache from call to call, where the
  /// worker that starts a launch varies: measured, that matters more
  /// (docs/notes/performance-history.md, 7798d9e).
  void start(bool shuffled) {
    const bool here = size() <= static_cast<std::int32_t>(pool_.size()) && !shuffled;
    const bool runner_here = here && max_runners_ > 0;
    std::int32_t first = -1;
    {
      std::lock_guard lock(mutex_);
      if (runner_here) ++runners_;
      for (std::int32_t d = 0; d < size(); ++d) {
        if (!hosted(d)) continue;
        if (here && !runner_here && first < 0) first = d;
        else push_locked(d);
      }
    }
    if (runner_here) run_ready();
    else if (first >= 0) owner_.run_device(first);
  }

  // With at most one device per worker, every run of a device is its own pool
  // task (as with shuffled scheduling, for testing, where the pool's random
  // order picks). With more devices than workers, queued devices wait in
  // the ready queue and a runner task runs them one after another, so a device queued
  // while a runner is busy costs no pool hand-off and no thread wake-up.
  // Small programs (no loops, no host effects, little data:
  // RuntimeOptions::single_worker_bytes) have one runner at a time whatever
  // the device count; others get another runner when two devices wait, up to
  // one per worker.
  void push_locked(std::int32_t d) {
    if (max_runners_ == 0) {
      pool_.push([self = owner_.shared_from_this(), d] { self->run_device(d); });
      return;
    }
    enqueue_ready_locked(d);
    if (runners_ == 0 || (more_than_one_ready_locked() && runners_ < max_runners_)) {
      ++runners_;
      pool_.push([self = owner_.shared_from_this()] { self->scheduler().run_ready(); });
    }
  }

  /// A runner: runs the devices in the ready queue until there are none.
  void run_ready() {
    std::unique_lock lock(mutex_);
    while (ready_head_ >= 0) {
      const std::int32_t d = dequeue_ready_locked();
      lock.unlock();
      owner_.run_device(d);
      lock.lock();
    }
    --runners_;
  }

  // ---- the life of a device; mutex() is held
  void running_locked(std::int32_t d) { slot(d).state = DeviceState::running; }
  /// The device stops for good (finished, failed or released).
  void retire_locked(std::int32_t d) {
    slot(d).state = DeviceState::done;
    --active_;
  }
  /// The device's run returned blocked: it runs again if a wake-up came
  /// meanwhile (true), else it parks (false).
  bool blocked_locked(std::int32_t d) {
    Slot& s = slot(d);
    if (s.wake_pending) {
      s.wake_pending = false;
      s.state = DeviceState::queued;
      ++stats_.wakeups;
      push_locked(d);
      return true;
    }
    s.state = DeviceState::parked;
    --active_;
    ++parked_;
    ++stats_.parks;
    return false;
  }
  /// What device d waits for if its wait is not satisfied (the device's thread).
  void set_park_locked(std::int32_t d, const Park& p) { slot(d).park = p; }
  void clear_park_locked(std::int32_t d) { slot(d).park.counter = nullptr; }

  /// Counter `c` rose: device d runs again if it is parked on it and the
  /// count it wants is there (or retries when its run returns).
  void wake_locked(std::int32_t d, const std::int64_t* c) {
    Slot& s = slot(d);
    if (s.park.counter != c || *c < s.park.wanted) return;
    if (s.state == DeviceState::parked) requeue_locked(d);
    else if (s.state == DeviceState::running) s.wake_pending = true;
  }
  /// Something arrived for counter `c` that may not satisfy the wait yet (a
  /// lazy copy, a remote signal): every device parked on it retries its wait.
  void poke_locked(const std::int64_t* c) {
    for (std::int32_t d = 0; d < size(); ++d)
      if (slot(d).state == DeviceState::parked && slot(d).park.counter == c) requeue_locked(d);
  }
  /// Releases every parked device (a failure, or a deadlock being reported).
  void release_parked_locked() {
    for (Slot& s : slots_)
      if (s.state == DeviceState::parked) s.state = DeviceState::done;
    parked_ = 0;
  }

  // Copies executed by pool tasks or a transport: the launch is not idle
  // while one is in flight.
  void copy_started_locked() { ++inflight_; }
  void copy_ended_locked() { --inflight_; }

  /// Nothing queued or running and no copy in flight.
  bool idle_locked() const noexcept { return active_ == 0 && inflight_ == 0; }
  int parked_locked() const noexcept { return parked_; }

  /// One line per parked device (or core: lane d of `mesh`): the op, the semaphore, its count, the count
  /// wanted, the user's line.
  std::string parked_lines(const Graph& g, const Mesh& mesh) const {
    std::vector<std::string> lines;
    for (std::int32_t d = 0; d < size(); ++d) {
      const Slot& s = slot(d);
      if (s.state != DeviceState::parked) continue;
      const Park& p = s.park;
      lines.push_back(fmt::format("  {}: {} on {}{} has {}, wants {} (at {})", mesh.describe_lane(d),
                                  p.op ? p.op->prim->name : "wait", report_semaphore_name(g, p.sem),
                                  g.type(p.sem).shape.rank() ? fmt::format("[{}]", p.index) : "",
                                  p.counter ? *p.counter : 0, p.wanted, p.op ? p.op->loc : SourceLoc{}));
    }
    return fmt::format("{}", fmt::join(lines, "\n"));
  }

 private:
  struct Slot {
    DeviceState state = DeviceState::absent;
    bool wake_pending = false;
    std::int32_t next_ready = -1;  // the ready queue is threaded through the slots
    Park park;
  };
  Slot& slot(std::int32_t d) { return slots_[static_cast<std::size_t>(d)]; }
  const Slot& slot(std::int32_t d) const { return slots_[static_cast<std::size_t>(d)]; }
  // The ready queue, FIFO, without allocation: a device is in it at most
  // once (it is queued only from absent, running or parked, never while
  // queued), so one link per slot suffices.
  void enqueue_ready_locked(std::int32_t d) {
    if (ready_tail_ >= 0) slot(ready_tail_).next_ready = d;
    else ready_head_ = d;
    ready_tail_ = d;
  }
  bool more_than_one_ready_locked() const { return ready_head_ != ready_tail_; }  // both -1 when empty
  std::int32_t dequeue_ready_locked() {
    const std::int32_t d = ready_head_;
    ready_head_ = std::exchange(slot(d).next_ready, -1);
    if (ready_head_ < 0) ready_tail_ = -1;
    return d;
  }
  void requeue_locked(std::int32_t d) {
    slot(d).state = DeviceState::queued;
    --parked_;
    ++active_;
    ++stats_.wakeups;
    push_locked(d);
  }

  Owner& owner_;
  WorkerPool& pool_;
  LaunchStats& stats_;  // parks and wake-ups (the owner's, under mutex_)
  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
  std::int32_t ready_head_ = -1, ready_tail_ = -1;  // queued devices, in order (see push_locked)
  int runners_ = 0;                                 // run_ready tasks queued or running
  int max_runners_ = 0;
  int active_ = 0;  // devices queued or running
  int parked_ = 0;
  int inflight_ = 0;  // copies being executed by pool tasks
};

}  // namespace refx::detail
