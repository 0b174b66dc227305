#pragma once
// Launch (detail/launch.hpp): how it ends. The first failure is the root
// cause and releases every parked device; an idle launch (nothing queued or
// running, no copy in flight) with a parked device is a deadlock; a launch
// that ends checks that every semaphore is back to 0, lets its observers
// report (a race) and hand over (a timeline), and sets its event.

#include <refx/runtime/detail/launch_devices.hpp>

namespace refx::detail {

inline void Launch::fail_locked(std::exception_ptr error, bool remote) {
  if (error_) return;  // the first failure is the root cause
  error_ = std::move(error);
  failed_.store(true, std::memory_order_release);
  sched_.release_parked_locked();
  if (ctx_.remote && !remote) {
    // Release every other rank's devices now; the coordinator reports this
    // rank's cause (the lowest rank's, if several failed on their own).
    local_error_ =
        fmt::format("{} [MPI rank {}]", message_of(error_, "refx: unknown exception"), ctx_.remote->placement().rank);
    ctx_.remote->failed(dispatch_.number, local_error_);
  }
}

// Every device has stopped: perform the ordered effects still buffered
// before the launch completes. If another worker is emitting, it completes
// the launch when it is done (it calls finish_if_idle afterwards).
inline bool Launch::effects_done_locked(std::unique_lock<std::mutex>& lock) {
  if (!effects_.active()) return true;
  emit_locked(lock);
  return !effects_.emitting() && !completed_ && sched_.idle_locked();
}

inline void Launch::finish_if_idle(std::unique_lock<std::mutex>& lock) {
  if (completed_ || !sched_.idle_locked()) return;
  lazy_.drain([&](CopyJob& job) { run_lazy_locked(job); });  // lazy copies nobody waited for still land
  if (!sched_.idle_locked()) return;
  if (ctx_.remote) {
    // Locally idle: the coordinator decides, across ranks, whether the
    // launch is over (a device parked here may still be signalled).
    if (!effects_done_locked(lock)) return;
    if (reported_sent_ == sent_ && reported_received_ == received_) return;  // nothing new
    reported_sent_ = sent_;
    reported_received_ = received_;
    transport::Report r = report_locked(0);
    lock.unlock();
    ctx_.remote->report(std::move(r));
    return;
  }
  if (!error_ && sched_.parked_locked() > 0) {
    error_ = std::make_exception_ptr(RuntimeError(deadlock_report()));
    sched_.release_parked_locked();
  }
  if (!effects_done_locked(lock)) return;
  complete(lock, error_, stats_);
}

inline void Launch::complete(std::unique_lock<std::mutex>& lock, std::exception_ptr error, const LaunchStats& stats) {
  completed_ = true;
  lock.unlock();
  if (!error && !ctx_.remote) error = check_exit_invariants();
  observers_.each([&](LaunchObserver& o) { o.on_end(program(), error); });
  const std::int32_t n = program().mesh.lanes();
  if (error) {
    // Leave the persistent state usable: barrier semaphores restart from 0.
    for (std::int32_t d = 0; d < n; ++d)
      for (std::int64_t id : program().barrier_ids) host_.barrier(d, id).fill_zero();
  }
  host_.record(stats);
  if (ctx_.remote) ctx_.remote->finished(dispatch_.number);
  // Nothing refers to the devices' storage any more (the transport has let
  // go of the launch too): the next launch of the program takes it over
  // instead of allocating its own.
  if (!error)
    for (auto& dev : devices_)
      if (dev) program().contexts.give(dev->id, std::move(dev->ctx));
  event_->set(error);
  host_.launch_finished();
}

inline std::exception_ptr Launch::check_exit_invariants() {
  std::string problems = unbalanced_lines();
  if (problems.empty()) return nullptr;
  return std::make_exception_ptr(RuntimeError(unbalanced_semaphores_message(program(), problems)));
}

inline std::string Launch::unbalanced_lines() {
  return unbalanced_semaphore_lines(
      program(), [&](std::int32_t lane) { return here(lane) ? device(lane).ctx.get() : nullptr; },
      [&](std::int32_t lane, std::int64_t id) -> const Buffer* { return &host_.barrier(lane, id); });
}

inline std::string Launch::deadlock_report() const {
  return fmt::format("refx: deadlock in kernel '{}' on mesh {}: no device can make progress, no copy is in flight\n{}",
                     program().name, program().mesh.describe(), sched_.parked_lines(program().graph, program().mesh));
}

}  // namespace refx::detail
