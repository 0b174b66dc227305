#pragma once
// Launch (detail/launch.hpp): its devices. A Device is the ExecEnv a
// device's ExecContext runs against: its semaphore ops, copies and host
// effects go to the launch. Here too: running a device once, and the
// semaphore counters (signal, wait) under the launch's lock.

#include <refx/runtime/detail/inline_launch.hpp>
#include <refx/runtime/detail/launch.hpp>

namespace refx::detail {

class Launch::Device final : public ExecEnv {
 public:
  /// Runs on `reused`, an earlier launch's context, or on a new one. `id` is
  /// the lane (device * cores + core; the device when it has one core).
  Device(Launch& l, std::int32_t id, std::unique_ptr<ExecContext> reused)
      : launch(l),
        id(id),
        cores(l.program().mesh.cores()),
        device(id / cores),
        core(id % cores),
        ctx(std::move(reused)) {
    if (ctx) ctx->reset(*this);
    else ctx = std::make_unique<ExecContext>(l.program().graph, *this);
  }
  std::int32_t device_id() const override { return device; }
  std::int32_t num_cores() const override { return cores; }
  std::int32_t core_index() const override { return core; }
  bool poisons_scratch() const override { return launch.options_.detect_races || launch.options_.lazy_copies; }
  std::int32_t num_devices() const override { return launch.program().mesh.size(); }
  std::int32_t axis_index(std::string_view axis) const override {
    if (axis == core_axis_name) return core;
    const Mesh& m = launch.program().mesh;
    return m.coord(device, m.axis(axis));
  }
  std::int32_t axis_size(std::string_view axis) const override {
    if (axis == core_axis_name) return cores;
    return launch.program().mesh.axis_size(axis);
  }
  // A device's signals and copies go to the same core of the target device.
  void semaphore_signal(ExecContext&, const Op&, ValueId sem, std::int64_t index, std::int64_t inc,
                        std::int32_t target) override {
    launch.signal(id, target * cores + core, sem, index, inc);
  }
  void core_semaphore_signal(ExecContext&, const Op&, ValueId sem, std::int64_t index, std::int64_t inc,
                             std::int32_t target_core) override {
    launch.signal(id, device * cores + target_core, sem, index, inc);
  }
  bool semaphore_wait(ExecContext& c, const Op& op, ValueId sem, std::int64_t index, std::int64_t value) override {
    const bool ok = launch.wait(*this, op, sem, index, value);
    if (ok && !copies.empty() && !waits_next(c)) launch.offer_copies(*this);
    return ok;
  }
  std::int64_t semaphore_read(ExecContext&, ValueId sem, std::int64_t index) override {
    std::lock_guard lock(launch.sched_.mutex());
    return launch.counter(id, sem, index);
  }
  void copy_start(ExecContext&, const Op& op, const CopyRequest& r) override {
    if (cores == 1) return launch.copy(*this, op, r);
    CopyRequest lane = r;
    lane.target = r.target * cores + core;
    launch.copy(*this, op, lane);
  }
  void copy_forwarded(ExecContext&, const Op&, const CopyRequest& r) override {
    launch.forwarded(id, r.recv_sem, r.recv_index, r.recv_inc, static_cast<std::int64_t>(r.src.bytes()));
  }
  Buffer& barrier_semaphore(std::int64_t collective_id) override { return launch.host_.barrier(id, collective_id); }
  bool observes_ops() const override { return launch.observers_.any(); }
  void before_op(ExecContext& c, const Op& op) override {
    launch.observers_.each([&](LaunchObserver& o) { o.on_op(id, c, op); });
  }
  void host_effect(ExecContext&, const Op& op, std::unique_ptr<HostEffect> e) override {
    launch.host_effect(id, op, std::move(e));
  }

  /// Whether the device's next op waits: then it has nothing to overlap a
  /// copy with (see Launch::copy).
  static bool waits_next(const ExecContext& c) {
    const Op* next = c.next_op();
    return next != nullptr && (next->prim == &prim::dma_wait || next->prim == &prim::semaphore_wait);
  }

  Launch& launch;
  const std::int32_t id;  // the lane
  const std::int32_t cores, device, core;
  std::unique_ptr<ExecContext> ctx;  // given back to the program when the launch succeeds
  // Its chunked copies that may still have unclaimed chunks (see copy()).
  // Only the thread running the device touches them.
  std::vector<std::shared_ptr<CopyJob>> copies;
};

inline void Launch::run_device(std::int32_t d) {
  Device& dev = device(d);
  {
    std::unique_lock lock(sched_.mutex());
    if (error_) {  // released by a failure elsewhere
      sched_.retire_locked(d);
      finish_if_idle(lock);
      return;
    }
    sched_.running_locked(d);
  }
  std::exception_ptr failure;
  const ExecStatus status = run_lane(*dev.ctx, program().mesh, d, failure);
  if (!dev.copies.empty()) offer_copies(dev);  // a copy held back for a wait that failed
  if (observers_.any()) {
    const bool blocked = status == ExecStatus::blocked && !failure;
    observers_.each([&](LaunchObserver& o) { o.on_device_stopped(d, blocked); });
  }
  std::unique_lock lock(sched_.mutex());
  if (failure) fail_locked(failure);
  if (error_ || status == ExecStatus::done) {
    sched_.retire_locked(d);
    // Slots (s, d) of a finished device are settled: later effects may go.
    if (effects_.active()) emit_locked(lock);
  } else if (sched_.blocked_locked(d)) {
    return;  // woken while it ran: queued again
  }
  finish_if_idle(lock);
}

inline std::int64_t& Launch::counter(std::int32_t device, ValueId sem, std::int64_t index) {
  const Graph& g = program().graph;
  const ValueInfo& info = g.value(sem);
  // Only barrier semaphores live in the runtime; allocate()'s and scopes' live on the device.
  const bool barrier = info.producer != no_id && g.op(info.producer).prim == &prim::barrier_semaphore;
  Buffer* storage = barrier
                        ? &host_.barrier(device, prim::barrier_semaphore_attrs(g, g.op(info.producer)).collective_id)
                        : this->device(device).ctx->storage(sem);
  return storage->data<std::int64_t>()[index];
}

inline void Launch::rose_locked(std::int32_t d, const std::int64_t* c) {
  sched_.wake_locked(d, c);
  if (!lazy_.empty()) sched_.poke_locked(c);
}

inline void Launch::signal(std::int32_t self, std::int32_t target, ValueId sem, std::int64_t index, std::int64_t inc) {
  if (ctx_.remote && !here(target)) {
    {
      std::lock_guard lock(sched_.mutex());
      ++sent_;  // counted before it can be received (quiescence detection)
    }
    ctx_.remote->signal(
        host_.owner(target, program().mesh.size()),
        transport::RemoteSignal{dispatch_.number, self, target, static_cast<std::int32_t>(sem), index, inc});
    return;
  }
  std::lock_guard lock(sched_.mutex());
  signal_locked(self, target, sem, index, inc);
}

inline void Launch::signal_locked(std::int32_t self, std::int32_t target, ValueId sem, std::int64_t index,
                                  std::int64_t inc) {
  std::int64_t& c = counter(target, sem, index);
  c += inc;
  if (observers_.any()) observers_.each([&](LaunchObserver& o) { o.on_signal(self, target, sem, index, c); });
  rose_locked(target, &c);
}

inline void Launch::forwarded(std::int32_t lane, ValueId sem, std::int64_t index, std::int64_t inc,
                              std::int64_t bytes) {
  std::lock_guard lock(sched_.mutex());
  stats_.bytes_copied += bytes;
  ++stats_.copies;
  ++stats_.forwarded;
  signal_locked(lane, lane, sem, index, inc);
}

inline bool Launch::wait(Device& dev, const Op& op, ValueId sem, std::int64_t index, std::int64_t value) {
  const std::int32_t self = dev.id;
  std::unique_lock lock(sched_.mutex());
  std::int64_t& c = counter(self, sem, index);
  if (c < value && !lazy_.empty()) lazy_.run_for(&c, [&](CopyJob& job) { run_lazy_locked(job); });
  if (c < value && !dev.copies.empty()) {
    // Rather than park, this thread runs the chunks of its own copies that
    // no other thread has taken yet (the data is likely in its cache).
    lock.unlock();
    for (const auto& job : dev.copies) {
      if (!job->offered) offer(job, job->chunks - 1);  // idle threads may help with the rest
      run_chunks(*job);
    }
    dev.copies.clear();
    lock.lock();
  }
  if (c >= value) {
    c -= value;
    sched_.clear_park_locked(self);
    if (observers_.any()) observers_.each([&](LaunchObserver& o) { o.on_wait(self, c, value, sem, index); });
    return true;
  }
  sched_.set_park_locked(self, Park{&op, &c, value, sem, index});
  return false;
}

}  // namespace refx::detail
