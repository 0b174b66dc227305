#pragma once
// One run of a program on every device of its mesh: a thin composition of
// the parts in this folder. The device scheduler (device_scheduler.hpp) runs
// and parks devices and detects deadlocks; the copy policies
// (copy_policies.hpp) move bytes; the effect sequencer (effect_sequencer.hpp)
// orders host effects; observers (launch_observer.hpp) watch. The launch
// itself holds the devices' state, keeps the semaphore counters (under the
// scheduler's one lock), and decides when and how it ends.
//
// Host effects (debug_print, io_callback; docs/effects.md): unordered ones,
// and every effect of a one-device program, run on the device's worker when
// reached; ordered ones of a multi-device program go through the sequencer.
// The launch completes (its Event is set) only after every buffered effect
// ran, so all of program k's effects precede program k+1's.
//
// Definitions: launch_start.hpp (construction and start), launch_devices.hpp
// (devices, signals, waits), launch_copies.hpp, launch_end.hpp (failure,
// idle, completion and its reports), launch_effects.hpp (inputs and host
// effects), launch_remote.hpp (the transport::Receiver side).

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <refx/ir/eval.hpp>
#include <refx/runtime/detail/copy_policies.hpp>
#include <refx/runtime/detail/device_scheduler.hpp>
#include <refx/runtime/detail/effect_sequencer.hpp>
#include <refx/runtime/detail/launch_observer.hpp>
#include <refx/runtime/detail/launch_request.hpp>
#include <refx/transport/transport.hpp>

namespace refx::detail {

class Launch final : public std::enable_shared_from_this<Launch>, public transport::Receiver {
 public:
  Launch(LaunchRequest&& request, LaunchContext&& context);

  /// Its place in the dispatch order (before start; the Runtime's lock is held).
  void dispatched(LaunchDispatch d) noexcept { dispatch_ = std::move(d); }
  /// Queues every device; called by the runtime when the launch's turn comes.
  void start();
  const std::shared_ptr<Event>& event() const noexcept { return event_; }
  LaunchStats stats() const {
    std::lock_guard lock(sched_.mutex());
    return stats_;
  }

  // ---- for the scheduler's pool tasks
  DeviceScheduler<Launch>& scheduler() noexcept { return sched_; }
  void run_device(std::int32_t d);

  // ---- transport::Receiver: what a Remote transport (transport/mpi.hpp)
  // delivers, on its thread (launch_remote.hpp).
  void remote_signal(const transport::RemoteSignal& s) override;
  std::byte* remote_destination(const transport::RemoteCopy& c) override;
  void remote_landed(const transport::RemoteCopy& c, Buffer* data) override;
  void remote_combine(const transport::RemoteCopy& c, std::int64_t first, Buffer& part, std::int64_t bytes) override;
  void remote_failed(const std::string& message) override;
  transport::Report probe_report(std::int64_t probe) override;
  void remote_finished(transport::Outcome outcome, const std::string& text, const transport::Totals& totals) override;

 private:
  class Device;  // launch_devices.hpp

  // ---- start, one call per concern (launch_start.hpp)
  /// Waits for the runtime tokens and input Arrays it depends on; the
  /// failure that stops it (an input from a failed call, a bad placement).
  std::exception_ptr await_dependencies();
  void prepare_effects();
  /// Builds the state of every device this process hosts; how many it built.
  std::int64_t build_devices();
  /// In-process, a launch that cannot start ends at once with `error`.
  void abandon(std::exception_ptr error);

  // ---- devices (launch_devices.hpp)
  void signal(std::int32_t self, std::int32_t target, ValueId sem, std::int64_t index, std::int64_t inc);
  void signal_locked(std::int32_t self, std::int32_t target, ValueId sem, std::int64_t index, std::int64_t inc);
  /// A copy lane `lane` forwarded (ExecEnv::copy_forwarded): counted as a
  /// copy of `bytes`, its receive semaphore raised, under one lock.
  void forwarded(std::int32_t lane, ValueId sem, std::int64_t index, std::int64_t inc, std::int64_t bytes);
  bool wait(Device& dev, const Op& op, ValueId sem, std::int64_t index, std::int64_t value);
  std::int64_t& counter(std::int32_t device, ValueId sem, std::int64_t index);
  /// A counter rose: wake device d if it waits for it; retry lazy copies' waiters.
  void rose_locked(std::int32_t d, const std::int64_t* c);
  Device& device(std::int32_t d) const { return *devices_[static_cast<std::size_t>(d)]; }
  bool here(std::int32_t d) const { return devices_[static_cast<std::size_t>(d)] != nullptr; }

  // ---- copies (launch_copies.hpp)
  void copy(Device& dev, const Op& op, const CopyRequest& r);
  void fill(CopyJob& job, Device& dev, const Op& op, const CopyRequest& r);
  void copy_chunked(Device& dev, std::shared_ptr<CopyJob> job);
  /// Queues pool tasks for the device's copies that have none yet.
  void offer_copies(Device& dev);
  void offer(const std::shared_ptr<CopyJob>& job, int tasks);
  void run_chunks(CopyJob& job);
  /// Data has landed: the receiver's semaphore rises, then the sender's.
  void complete_copy_locked(const CopyJob& job);
  void run_lazy_locked(CopyJob& job);

  // ---- the end (launch_end.hpp)
  void fail_locked(std::exception_ptr error, bool remote = false);
  /// Ends the launch if nothing can run any more; unlocks `lock`.
  void finish_if_idle(std::unique_lock<std::mutex>& lock);
  /// Performs the buffered ordered effects; false if the launch must not end yet.
  bool effects_done_locked(std::unique_lock<std::mutex>& lock);
  /// Sets the event and hands the queue on; `lock` is held on entry.
  void complete(std::unique_lock<std::mutex>& lock, std::exception_ptr error, const LaunchStats& stats);
  std::exception_ptr check_exit_invariants();
  std::string unbalanced_lines();
  std::string deadlock_report() const;

  // ---- effects (launch_effects.hpp)
  std::exception_ptr wait_for_inputs();
  void host_effect(std::int32_t d, const Op& op, std::unique_ptr<HostEffect> e);
  /// Performs one effect on this thread; its failure, or null.
  std::exception_ptr perform(HostEffect& e, const Op& op, std::int32_t d);
  void emit_locked(std::unique_lock<std::mutex>& lock);

  // ---- remote transport (launch_remote.hpp)
  void remote_copy(std::int32_t self, const Op& op, const CopyRequest& r);
  transport::Report report_locked(std::int64_t probe);

  const Program& program() const noexcept { return *req_.program; }

  LaunchRequest req_;
  LaunchContext ctx_;
  LaunchDispatch dispatch_;
  LaunchHost& host_;
  WorkerPool& pool_;
  const RuntimeOptions& options_;
  Observers observers_;
  std::vector<std::unique_ptr<Device>> devices_;  // null: not hosted by this process
  std::shared_ptr<Event> event_;
  LaunchStats stats_;  // under the scheduler's lock
  DeviceScheduler<Launch> sched_;
  LazyCopies lazy_;
  EffectSequencer effects_;
  PrintSink print_;  // calls dispatch_.sink (set up in start)
  bool completed_ = false;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};  // error_ is set (read without the lock)
  // Remote transport (null in-process): messages sent / applied, and this
  // rank's own root cause.
  std::int64_t sent_ = 0, received_ = 0, report_seq_ = 0;
  std::string local_error_;
  std::int64_t reported_sent_ = -1, reported_received_ = -1;  // at the last idle report
};

}  // namespace refx::detail
