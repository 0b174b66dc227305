#pragma once
// Definitions of Launch (see launch.hpp); they need the Runtime.

#include <refx/runtime/runtime.hpp>

namespace refx {

inline Launch::Launch(Runtime& rt, std::shared_ptr<const Program> program, std::vector<std::vector<Buffer*>> args,
                      std::vector<std::shared_ptr<const void>> keep_alive)
    : rt_(rt), program_(std::move(program)), args_(std::move(args)), keep_alive_(std::move(keep_alive)) {
  if (rt.options().detect_races) races_ = std::make_unique<RaceDetector>(program_->mesh.size());
}

inline void Launch::start() {
  const std::int32_t n = program_->mesh.size();
  try {
    devices_.reserve(static_cast<std::size_t>(n));
    for (std::int32_t d = 0; d < n; ++d) {
      devices_.push_back(std::make_unique<Device>(*this, d));
      auto& args = args_[static_cast<std::size_t>(d)];
      for (std::size_t i = 0; i < args.size(); ++i) devices_.back()->ctx.bind_param(i, *args[i]);
    }
  } catch (...) {
    event_->set(std::current_exception());
    rt_.launch_finished();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    active_ = n;
  }
  for (std::int32_t d = 0; d < n; ++d) push(d);
}

inline void Launch::push(std::int32_t d) {
  rt_.pool().push([self = shared_from_this(), d] { self->run_device(d); });
}

inline void Launch::run_device(std::int32_t d) {
  Device& dev = *devices_[static_cast<std::size_t>(d)];
  {
    std::unique_lock lock(mutex_);
    if (error_) {  // released by a failure elsewhere
      dev.state = State::done;
      --active_;
      finish_if_idle(lock);
      return;
    }
    dev.state = State::running;
  }
  ExecStatus status = ExecStatus::done;
  std::exception_ptr failure;
  try {
    status = dev.ctx.run();
  } catch (const std::exception& e) {
    failure = std::make_exception_ptr(RuntimeError(fmt::format("refx: device {}: {}", d, e.what())));
  } catch (...) {
    failure = std::make_exception_ptr(RuntimeError(fmt::format("refx: device {}: unknown exception", d)));
  }
  std::unique_lock lock(mutex_);
  if (failure) fail_locked(failure);
  if (error_ || status == ExecStatus::done) {
    dev.state = State::done;
    if (!error_) ++finished_;
    --active_;
  } else if (dev.wake_pending) {
    dev.wake_pending = false;
    dev.state = State::queued;
    ++stats_.wakeups;
    lock.unlock();
    push(d);
    return;
  } else {
    dev.state = State::parked;
    --active_;
    ++parked_;
    ++stats_.parks;
  }
  finish_if_idle(lock);
}

inline std::int64_t& Launch::counter(std::int32_t device, ValueId sem, std::int64_t index) {
  const Graph& g = program_->graph;
  const ValueInfo& info = g.value(sem);
  Buffer* storage = info.producer != no_id ? &rt_.barrier(device, g.attrs(g.op(info.producer))[0])
                                           : devices_[static_cast<std::size_t>(device)]->ctx.storage(sem);
  return storage->data<std::int64_t>()[index];
}

inline void Launch::wake_locked(std::int32_t d, const std::int64_t* c) {
  Device& dev = *devices_[static_cast<std::size_t>(d)];
  if (dev.park_counter != c || *c < dev.park_wanted) return;
  if (dev.state == State::parked) {
    dev.state = State::queued;
    --parked_;
    ++active_;
    ++stats_.wakeups;
    push(d);
  } else if (dev.state == State::running) {
    dev.wake_pending = true;
  }
}

inline void Launch::signal(std::int32_t self, std::int32_t target, ValueId sem, std::int64_t index, std::int64_t inc) {
  std::lock_guard lock(mutex_);
  std::int64_t& c = counter(target, sem, index);
  if (races_) races_->release(self, &c);
  c += inc;
  wake_locked(target, &c);
  if (!pending_.empty()) poke_locked(&c);
}

inline bool Launch::wait(std::int32_t self, const Op& op, ValueId sem, std::int64_t index, std::int64_t value) {
  std::lock_guard lock(mutex_);
  Device& dev = *devices_[static_cast<std::size_t>(self)];
  std::int64_t& c = counter(self, sem, index);
  if (c < value && !pending_.empty()) run_pending_locked(&c);
  if (c >= value) {
    c -= value;
    dev.park_counter = nullptr;
    if (races_) races_->acquire(self, &c);
    return true;
  }
  dev.park_op = &op;
  dev.park_counter = &c;
  dev.park_wanted = value;
  dev.park_sem = sem;
  dev.park_index = index;
  return false;
}

inline void Launch::copy(std::int32_t self, const Op&, const CopyRequest& r) {
  auto job = std::make_shared<CopyJob>();
  job->src = r.src;
  job->dst = r.dst;
  job->dst.buffer = devices_[static_cast<std::size_t>(r.target)]->ctx.storage(r.dst_ref);
  job->reduce = r.reduce;
  job->source = self;
  job->target = r.target;
  job->recv_sem = r.recv_sem;
  job->recv_index = r.recv_index;
  job->send_sem = r.send_sem;
  job->send_index = r.send_index;
  job->bytes = static_cast<std::int64_t>(r.src.bytes());
  const RuntimeOptions& o = rt_.options();
  {
    std::lock_guard lock(mutex_);
    job->recv_counter = &counter(job->target, job->recv_sem, job->recv_index);
    if (job->send_sem != no_id) job->send_counter = &counter(job->source, job->send_sem, job->send_index);
    if (races_) {
      job->race_thread = races_->copy_begin(self);
      races_->copy_access(job->race_thread, job->src, job->dst, self, job->target, r.loc);
    }
    if (o.lazy_copies) {
      pending_.push_back(job);
      poke_locked(job->recv_counter);
      if (job->send_counter) poke_locked(job->send_counter);
      return;
    }
  }
  const bool chunkable = is_contiguous(job->src) && is_contiguous(job->dst);
  if (!chunkable || static_cast<std::size_t>(job->bytes) <= o.inline_copy_bytes || rt_.pool().size() < 2) {
    copy_region(job->src, job->dst, job->reduce);
    std::lock_guard lock(mutex_);
    complete_copy_locked(*job);
    return;
  }
  // Split so that every worker helps; the last chunk to finish completes it.
  const std::int64_t n = job->src.elements();
  const auto es = static_cast<std::int64_t>(size_of(job->src.buffer->dtype()));
  const std::int64_t per = std::max<std::int64_t>(1, static_cast<std::int64_t>(o.copy_chunk_bytes) / es);
  const auto chunks = static_cast<int>((n + per - 1) / per);
  job->remaining.store(chunks);
  {
    std::lock_guard lock(mutex_);
    ++inflight_;
  }
  for (int c = 0; c < chunks; ++c) {
    const std::int64_t b = c * per, e = std::min(n, b + per);
    rt_.pool().push([self = shared_from_this(), job, b, e] {
      copy_contiguous(job->src, job->dst, job->reduce, b, e);
      if (job->remaining.fetch_sub(1) == 1) {
        std::unique_lock lock(self->mutex_);
        self->complete_copy_locked(*job);
        --self->inflight_;
        self->finish_if_idle(lock);
      }
    });
  }
}

// Data has landed: now the receiver's semaphore rises, then the sender's.
inline void Launch::complete_copy_locked(const CopyJob& job) {
  if (races_) races_->release(job.race_thread, job.recv_counter);
  *job.recv_counter += job.bytes;
  wake_locked(job.target, job.recv_counter);
  if (job.send_counter) {
    if (races_) races_->release(job.race_thread, job.send_counter);
    *job.send_counter += job.bytes;
    wake_locked(job.source, job.send_counter);
  }
  stats_.bytes_copied += job.bytes;
  ++stats_.copies;
}

inline void Launch::run_copy_locked(CopyJob& job) {
  copy_region(job.src, job.dst, job.reduce);
  complete_copy_locked(job);
}

inline void Launch::run_pending_locked(const std::int64_t* c) {
  for (std::size_t i = pending_.size(); i-- > 0;) {
    if (pending_[i]->recv_counter != c && pending_[i]->send_counter != c) continue;
    auto job = std::move(pending_[i]);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    run_copy_locked(*job);
  }
}

// A lazy copy or a signal arrived for a counter a device is parked on: let the
// device retry its wait (which runs the pending copies it needs).
inline void Launch::poke_locked(const std::int64_t* c) {
  for (auto& dev : devices_)
    if (dev->state == State::parked && dev->park_counter == c) {
      dev->state = State::queued;
      --parked_;
      ++active_;
      ++stats_.wakeups;
      push(dev->id);
    }
}

inline void Launch::fail_locked(std::exception_ptr error) {
  if (error_) return;  // the first failure is the root cause
  error_ = std::move(error);
  for (auto& dev : devices_)
    if (dev->state == State::parked) {
      dev->state = State::done;
      --parked_;
    }
}

inline void Launch::finish_if_idle(std::unique_lock<std::mutex>& lock) {
  if (completed_ || active_ > 0 || inflight_ > 0) return;
  while (!pending_.empty()) {  // lazy copies nobody waited for still land
    auto job = std::move(pending_.back());
    pending_.pop_back();
    run_copy_locked(*job);
  }
  if (active_ > 0) return;
  if (!error_ && parked_ > 0) {
    error_ = std::make_exception_ptr(RuntimeError(deadlock_report()));
    for (auto& dev : devices_)
      if (dev->state == State::parked) dev->state = State::done;
    parked_ = 0;
  }
  completed_ = true;
  std::exception_ptr error = error_;
  const LaunchStats stats = stats_;
  lock.unlock();
  if (!error) error = check_exit_invariants();
  if (!error && races_) {
    if (auto races = races_->races(); !races.empty())
      error = std::make_exception_ptr(RuntimeError(fmt::format(
          "refx: data race in kernel '{}': unordered conflicting accesses (order them with a semaphore or a "
          "copy wait):\n  {}",
          program_->name, fmt::join(races, "\n  "))));
  }
  if (error) {
    // Leave the persistent state usable: barrier semaphores restart from 0.
    for (std::int32_t d = 0; d < program_->mesh.size(); ++d)
      for (std::int64_t id : program_->barrier_ids) rt_.barrier(d, id).fill_zero();
  }
  rt_.record(stats);
  event_->set(error);
  rt_.launch_finished();
}

inline std::exception_ptr Launch::check_exit_invariants() {
  std::vector<std::string> problems;
  const Graph& g = program_->graph;
  for (const auto& dev : devices_) {
    dev->ctx.for_each_scoped([&](ValueId v, const Buffer& b) {
      if (!g.type(v).is_semaphore()) return;
      for (std::int64_t i = 0; i < b.size(); ++i)
        if (const std::int64_t c = b.data<std::int64_t>()[i]; c != 0)
          problems.push_back(fmt::format("  device {}: {}{} ends at {}{}", dev->id, program_->semaphore_name(v),
                                         b.size() > 1 ? fmt::format("[{}]", i) : "", c,
                                         g.type(v).semaphore == SemaphoreKind::dma
                                             ? " (bytes of a copy started and never waited, or sent and not received)"
                                             : ""));
    });
    for (std::int64_t id : program_->barrier_ids)
      if (const std::int64_t c = *rt_.barrier(dev->id, id).data<std::int64_t>(); c != 0)
        problems.push_back(fmt::format("  device {}: barrier semaphore (collective id {}) ends at {}", dev->id, id, c));
  }
  if (problems.empty()) return nullptr;
  return std::make_exception_ptr(RuntimeError(fmt::format(
      "refx: kernel '{}' ended with semaphores not back to 0 (every signal must be waited and every copy "
      "waited):\n{}",
      program_->name, fmt::join(problems, "\n"))));
}

inline std::string Launch::deadlock_report() const {
  std::vector<std::string> lines;
  const Graph& g = program_->graph;
  for (const auto& dev : devices_) {
    if (dev->state != State::parked) continue;
    const Op* op = dev->park_op;
    lines.push_back(fmt::format("  device {}: {} on {}{} has {}, wants {} (at {})", dev->id,
                                op ? op->prim->name : "wait", program_->semaphore_name(dev->park_sem),
                                g.type(dev->park_sem).shape.rank() ? fmt::format("[{}]", dev->park_index) : "",
                                dev->park_counter ? *dev->park_counter : 0, dev->park_wanted,
                                op ? op->loc : SourceLoc{}));
  }
  return fmt::format("refx: deadlock in kernel '{}' on mesh {}: no device can make progress, no copy is in flight\n{}",
                     program_->name, program_->mesh.describe(), fmt::join(lines, "\n"));
}

inline void Launch::Device::before_op(ExecContext& c, const Op& op) {
  if (op.prim == &prim::dma_start || op.prim == &prim::dma_wait) return;  // copies log themselves
  const Graph& g = c.graph();
  for (const Effect& e : g.effects(op)) {
    if (e.view == no_id || !(e.bits & (effect_read | effect_write | effect_accum))) continue;
    const bool write = (e.bits & (effect_write | effect_accum)) != 0;
    launch.races_->access(id, c.resolve(e.view, op.loc), write, write ? "write" : "read", op.loc);
  }
}

inline Buffer& Launch::Device::barrier_semaphore(std::int64_t collective_id) {
  return launch.rt_.barrier(id, collective_id);
}

}  // namespace refx
