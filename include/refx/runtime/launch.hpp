#pragma once
// One run of a program on every device of its mesh. A device is state (an
// ExecContext and its semaphores), not a thread: a pool task runs it until it
// finishes or blocks; a blocked device parks and a signal or a completed copy
// that satisfies its wait puts it back on the queue. One lock guards all
// semaphore and scheduling state of the launch, which makes deadlock
// detection exact: nothing queued or running, no copy in flight, and some
// device parked.
//
// Host effects (debug_print, io_callback; docs/effects.md): unordered ones run
// on the device's worker when reached. Ordered ones of a multi-device program
// are buffered per device and performed in (sequence, device) order -- the
// device's n-th ordered effect of a kind, then the device id -- by whichever
// worker completes a prefix of that order; devices never wait for each
// other's turn. The launch completes (its Event is set) only after every
// buffered effect ran, so all of program k's effects precede program k+1's.

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <vector>

#include <refx/ir/eval.hpp>
#include <refx/runtime/copy_engine.hpp>
#include <refx/runtime/effects.hpp>
#include <refx/runtime/event.hpp>
#include <refx/runtime/program.hpp>
#include <refx/runtime/race_detector.hpp>
#include <refx/runtime/timeline.hpp>
#include <refx/transport/transport.hpp>

namespace refx {

class Runtime;

class Launch final : public std::enable_shared_from_this<Launch>, public transport::Receiver {
 public:
  /// `args[d][i]` is device d's storage for kernel parameter i.
  Launch(Runtime& rt, std::shared_ptr<const Program> program, std::vector<std::vector<Buffer*>> args,
         std::vector<std::shared_ptr<const void>> keep_alive, LaunchEffects fx = {});

  /// Queues every device; called by the runtime when the launch's turn comes.
  void start();
  const std::shared_ptr<Event>& event() const noexcept { return event_; }
  LaunchStats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }

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
  enum class State : std::uint8_t { queued, running, parked, done };

  class Device final : public ExecEnv {
   public:
    /// Runs on `reused`, an earlier launch's context, or on a new one.
    Device(Launch& l, std::int32_t id, std::unique_ptr<ExecContext> reused) : launch(l), id(id), ctx(std::move(reused)) {
      if (ctx) ctx->reset(*this);
      else ctx = std::make_unique<ExecContext>(l.program_->graph, *this);
    }
    std::int32_t device_id() const override { return id; }
    bool poisons_scratch() const override;
    std::int32_t num_devices() const override { return launch.program_->mesh.size(); }
    std::int32_t axis_index(std::string_view axis) const override {
      const Mesh& m = launch.program_->mesh;
      return m.coord(id, m.axis(axis));
    }
    std::int32_t axis_size(std::string_view axis) const override { return launch.program_->mesh.axis_size(axis); }
    void semaphore_signal(ExecContext&, const Op&, ValueId sem, std::int64_t index, std::int64_t inc,
                          std::int32_t device) override {
      launch.signal(id, device, sem, index, inc);
    }
    bool semaphore_wait(ExecContext& c, const Op& op, ValueId sem, std::int64_t index, std::int64_t value) override {
      const bool ok = launch.wait(*this, op, sem, index, value);
      if (ok && !copies.empty() && !waits_next(c)) launch.offer_copies(*this);
      return ok;
    }
    std::int64_t semaphore_read(ExecContext&, ValueId sem, std::int64_t index) override {
      std::lock_guard lock(launch.mutex_);
      return launch.counter(id, sem, index);
    }
    void copy_start(ExecContext&, const Op& op, const CopyRequest& r) override {
      launch.copy(*this, op, r);
    }
    Buffer& barrier_semaphore(std::int64_t collective_id) override;
    bool observes_ops() const override { return launch.races_ != nullptr || launch.timeline_ != nullptr; }
    void before_op(ExecContext& c, const Op& op) override;
    void host_effect(ExecContext&, const Op& op, std::unique_ptr<HostEffect> e) override {
      launch.host_effect(id, op, std::move(e));
    }

    Launch& launch;
    const std::int32_t id;
    std::unique_ptr<ExecContext> ctx;  // given back to the program when the launch succeeds
    State state = State::queued;
    bool wake_pending = false;
    // Its chunked copies that may still have unclaimed chunks (see copy()).
    // Only the thread running the device touches them.
    std::vector<std::shared_ptr<CopyJob>> copies;
    // What a parked device waits for (for wake-ups and deadlock reports).
    const Op* park_op = nullptr;
    const std::int64_t* park_counter = nullptr;
    std::int64_t park_wanted = 0;
    ValueId park_sem = no_id;
    std::int64_t park_index = 0;
  };

  /// Whether the device's next op waits: then it has nothing to overlap a
  /// copy with (see copy()).
  static bool waits_next(const ExecContext& c) {
    const Op* next = c.next_op();
    return next != nullptr && (next->prim == &prim::dma_wait || next->prim == &prim::semaphore_wait);
  }
  void run_device(std::int32_t d);
  /// Queues device d to run; mutex_ is held.
  void push_locked(std::int32_t d);
  /// A runner: runs the devices in ready_ until there are none.
  void run_ready();
  void signal(std::int32_t self, std::int32_t target, ValueId sem, std::int64_t index, std::int64_t inc);
  bool wait(Device& dev, const Op& op, ValueId sem, std::int64_t index, std::int64_t value);
  void copy(Device& dev, const Op& op, const CopyRequest& r);
  /// Queues pool tasks for the device's copies that have none yet.
  void offer_copies(Device& dev);
  /// Queues `tasks` pool tasks that run chunks of `job`.
  void offer(const std::shared_ptr<CopyJob>& job, int tasks);
  /// Runs unclaimed chunks of `job` until none is left.
  void run_chunks(CopyJob& job);
  void run_copy_locked(CopyJob& job);
  void complete_copy_locked(const CopyJob& job);
  /// Lazy copies: run the pending ones that advance `counter` (latest first).
  void run_pending_locked(const std::int64_t* counter);
  void poke_locked(const std::int64_t* counter);
  std::int64_t& counter(std::int32_t device, ValueId sem, std::int64_t index);
  void wake_locked(std::int32_t d, const std::int64_t* counter);
  void fail_locked(std::exception_ptr error, bool remote = false);
  /// Ends the launch if nothing can run any more; unlocks `lock`.
  void finish_if_idle(std::unique_lock<std::mutex>& lock);
  /// Sets the event and hands the queue on; `lock` is held on entry.
  void complete(std::unique_lock<std::mutex>& lock, std::exception_ptr error, const LaunchStats& stats);
  // Remote transport: copies and signals to devices on other ranks.
  void remote_copy(std::int32_t self, const Op& op, const CopyRequest& r);
  transport::Report report_locked(std::int64_t probe);
  std::string unbalanced_lines();
  std::string parked_lines() const;
  std::exception_ptr check_exit_invariants();
  std::string deadlock_report() const;

  // ---- host effects (issue 6)
  friend class Runtime;  // sets sink_, deps_ and inputs_ at dispatch
  /// Waits for inputs_ (Arrays of unfinished calls, e.g. on another Runtime);
  /// the failure to report if one of them is an input whose producer failed.
  std::exception_ptr wait_for_inputs();
  /// Ordered effects of one kind, buffered until their turn.
  struct PendingEffect {
    std::int64_t seq = 0;
    std::int32_t device = 0;
    const Op* op = nullptr;
    std::unique_ptr<HostEffect> effect;
  };
  struct Chain {
    std::vector<std::deque<PendingEffect>> queues;  // per device, in sequence order
    std::vector<std::int64_t> reached;              // per device: effects of this kind reached so far
    std::int64_t seq = 0;                           // the next slot to perform is (seq, dev)
    std::int32_t dev = 0;
    std::int64_t buffered = 0;
    bool broken = false;                            // an effect failed: the rest of the chain is dropped
  };
  void host_effect(std::int32_t d, const Op& op, std::unique_ptr<HostEffect> e);
  /// Performs one effect on this thread; its failure, or null.
  std::exception_ptr perform(HostEffect& e, const Op& op, std::int32_t d);
  /// Performs every buffered effect whose turn has come; unlocks `lock` while
  /// an effect runs. One emitter at a time; others leave the work to it.
  void emit_locked(std::unique_lock<std::mutex>& lock);
  bool next_effect_locked(Chain& c, PendingEffect& out);

  Runtime& rt_;
  std::shared_ptr<const Program> program_;
  std::vector<std::vector<Buffer*>> args_;
  std::vector<std::shared_ptr<const void>> keep_alive_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::shared_ptr<Event> event_ = std::make_shared<Event>(&rt_);

  mutable std::mutex mutex_;
  std::deque<std::int32_t> ready_;  // queued devices, in order (see push_locked)
  int runners_ = 0;   // run_ready tasks queued or running
  int max_runners_ = 0;  // set in the constructor; 0: every run of a device is its own pool task
  int active_ = 0;    // devices queued or running
  int parked_ = 0;
  int finished_ = 0;
  int inflight_ = 0;  // copies being executed by pool tasks
  bool completed_ = false;
  std::exception_ptr error_;
  LaunchStats stats_;
  std::unique_ptr<RaceDetector> races_;
  std::vector<std::shared_ptr<CopyJob>> pending_;  // lazy copies not yet run
  std::unique_ptr<LaunchTimeline> timeline_;       // null unless a timeline is recording (set at dispatch)

  LaunchEffects fx_;
  std::shared_ptr<PrintSinkHolder> sink_;          // the runtime's sink when dispatched
  PrintSink print_;                                // calls sink_ (set up in start)
  std::vector<std::shared_ptr<Event>> deps_;       // runtime tokens this launch takes
  std::vector<InputDependency> inputs_;            // argument Arrays from unfinished / failed calls
  std::atomic<bool> failed_{false};                // error_ is set (read without the lock)
  // Remote transport (null in-process): this launch's number (the same on
  // every rank), messages sent / applied, and this rank's own root cause.
  transport::Remote* remote_ = nullptr;
  std::int64_t number_ = 0;
  std::int64_t sent_ = 0, received_ = 0, report_seq_ = 0;
  std::string local_error_;
  std::int64_t reported_sent_ = -1, reported_received_ = -1;  // at the last idle report
  std::unique_ptr<std::array<Chain, num_ordered_effects>> chains_;  // multi-device ordered effects
  bool emitting_ = false;
};

}  // namespace refx
