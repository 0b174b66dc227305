#pragma once
// Definitions of Launch (see launch.hpp); they need the Runtime.

#include <refx/runtime/runtime.hpp>

namespace refx {

inline Launch::Launch(Runtime& rt, std::shared_ptr<const Program> program, std::vector<std::vector<Buffer*>> args,
                      std::vector<std::shared_ptr<const void>> keep_alive, LaunchEffects fx)
    : rt_(rt), program_(std::move(program)), args_(std::move(args)), keep_alive_(std::move(keep_alive)), fx_(fx) {
  if (rt.options().detect_races) races_ = std::make_unique<RaceDetector>(program_->mesh.size());
  const auto workers = static_cast<int>(rt.pool().size());
  // Small programs (no loops, no host effects, little data) run their devices
  // one after another on one runner even with a worker per device: their
  // time is hand-offs between threads, not work.
  const bool small = !program_->loops && !fx_.host_effects &&
                     static_cast<std::size_t>(program_->max_data_bytes) <= rt.options().single_worker_bytes;
  if ((program_->mesh.size() > workers || small) && rt.options().shuffle_seed == 0) {
    max_runners_ = small ? 1 : workers;
  }
}

inline void Launch::start() {
  const std::int32_t n = program_->mesh.size();
  // Runtime tokens: the previous launches with our ordered effect kinds must
  // have finished. With FIFO launches they have (launches run one at a time,
  // in dispatch order); a scheduler that overlaps launches must start this
  // one only when deps_ are ready. A failed dependency does not fail us.
  for (const auto& dep : deps_) {
    try {
      dep->wait(&rt_.pool());
    } catch (...) {  // reported by the dependency's own outputs / effects_barrier
    }
  }
  deps_.clear();
  std::exception_ptr early = inputs_.empty() ? nullptr : wait_for_inputs();
  if (!early && remote_)
    if (std::string why = remote_->placement().check(n); !why.empty()) early = std::make_exception_ptr(RuntimeError(why));
  if (early && !remote_) {
    // Nothing runs: the outputs carry the cause (and so do their consumers').
    event_->set(early);
    rt_.launch_finished();
    return;
  }
  if (fx_.host_effects) {
    if (sink_) print_ = [sink = sink_](std::string_view s) { (*sink)(s); };
    else print_ = detail::print_to_stdout;
    if (fx_.ordered_mask != 0 && n > 1) {
      chains_ = std::make_unique<std::array<Chain, num_ordered_effects>>();
      for (Chain& c : *chains_) {
        c.queues.resize(static_cast<std::size_t>(n));
        c.reached.assign(static_cast<std::size_t>(n), 0);
      }
    }
  }
  // With a remote transport only this rank's devices exist here (the others'
  // slots stay null); every rank still takes part in ending the launch.
  std::int32_t hosted = 0, built = 0;
  try {
    devices_.resize(static_cast<std::size_t>(n));
    for (std::int32_t d = 0; d < n && !early; ++d) {
      if (remote_ && !rt_.hosts(d, n)) continue;
      std::unique_ptr<ExecContext> reused = program_->contexts.take();
      if (!reused) ++built;
      auto& dev = devices_[static_cast<std::size_t>(d)] = std::make_unique<Device>(*this, d, std::move(reused));
      auto& args = args_[static_cast<std::size_t>(d)];
      for (std::size_t i = 0; i < args.size(); ++i) dev->ctx->bind_param(i, *args[i]);
      ++hosted;
    }
  } catch (...) {
    if (!remote_) {
      event_->set(std::current_exception());
      rt_.launch_finished();
      return;
    }
    early = std::current_exception();
  }
  if (early) {
    devices_.clear();
    devices_.resize(static_cast<std::size_t>(n));
    hosted = 0;
  }
  {
    std::lock_guard lock(mutex_);
    active_ = hosted;
    stats_.contexts_built = built;
  }
  if (remote_) {
    remote_->started(number_, shared_from_this());  // delivers what arrived early
    if (early) {
      std::unique_lock lock(mutex_);
      fail_locked(early);
      finish_if_idle(lock);
      return;
    }
  }
  // With no more devices than workers, this thread (a pool task) runs
  // devices itself instead of handing them all to other threads: one
  // hand-off less per launch. It becomes the first runner, or runs the first
  // device while the others go to the pool (unless the pool's shuffled order
  // is to pick). With more devices, a pushed runner is usually taken by the
  // host thread waiting for the launch, which keeps the devices' state in one
  // core's cache from call to call, where the worker that starts a launch
  // varies: measured, that matters more (docs/performance.md).
  const bool here = n <= static_cast<std::int32_t>(rt_.pool().size()) && rt_.options().shuffle_seed == 0;
  const bool runner_here = here && max_runners_ > 0;
  std::int32_t first = -1;
  {
    std::lock_guard lock(mutex_);
    if (runner_here) ++runners_;
    for (std::int32_t d = 0; d < n; ++d) {
      if (!devices_[static_cast<std::size_t>(d)]) continue;
      if (here && !runner_here && first < 0) first = d;
      else push_locked(d);
    }
  }
  if (runner_here) run_ready();
  else if (first >= 0) run_device(first);
}

// With at most one device per worker, every run of a device is its own pool
// task (as with shuffled scheduling, for testing, where the pool's random
// order picks). With more devices than workers, queued devices wait in
// ready_ and a runner task runs them one after another, so a device queued
// while a runner is busy costs no pool hand-off and no thread wake-up.
// Small programs (no loops, no host effects, little data:
// RuntimeOptions::single_worker_bytes) have one runner at a time whatever
// the device count; others get another runner when two devices wait, up to
// one per worker.
inline void Launch::push_locked(std::int32_t d) {
  if (max_runners_ == 0) {
    rt_.pool().push([self = shared_from_this(), d] { self->run_device(d); });
    return;
  }
  ready_.push_back(d);
  if (runners_ == 0 || (ready_.size() > 1 && runners_ < max_runners_)) {
    ++runners_;
    rt_.pool().push([self = shared_from_this()] { self->run_ready(); });
  }
}

inline void Launch::run_ready() {
  std::unique_lock lock(mutex_);
  while (!ready_.empty()) {
    const std::int32_t d = ready_.front();
    ready_.pop_front();
    lock.unlock();
    run_device(d);
    lock.lock();
  }
  --runners_;
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
    status = dev.ctx->run();
  } catch (const std::exception& e) {
    std::string_view what = e.what();  // refx's own messages already start with "refx: "
    if (what.starts_with("refx: ")) what.remove_prefix(6);
    failure = std::make_exception_ptr(RuntimeError(fmt::format("refx: device {}: {}", d, what)));
  } catch (...) {
    failure = std::make_exception_ptr(RuntimeError(fmt::format("refx: device {}: unknown exception", d)));
  }
  if (!dev.copies.empty()) offer_copies(dev);  // a copy held back for a wait that failed
  if (timeline_) timeline_->device_stopped(d, status == ExecStatus::blocked && !failure);
  std::unique_lock lock(mutex_);
  if (failure) fail_locked(failure);
  if (error_ || status == ExecStatus::done) {
    dev.state = State::done;
    if (!error_) ++finished_;
    --active_;
    // Slots (s, d) of a finished device are settled: later effects may go.
    if (chains_) emit_locked(lock);
  } else if (dev.wake_pending) {
    dev.wake_pending = false;
    dev.state = State::queued;
    ++stats_.wakeups;
    push_locked(d);
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
  // Only barrier semaphores live in the runtime; allocate()'s and scopes' live on the device.
  const bool barrier = info.producer != no_id && g.op(info.producer).prim == &prim::barrier_semaphore;
  Buffer* storage = barrier ? &rt_.barrier(device, g.attrs(g.op(info.producer))[0])
                            : devices_[static_cast<std::size_t>(device)]->ctx->storage(sem);
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
    push_locked(d);
  } else if (dev.state == State::running) {
    dev.wake_pending = true;
  }
}

inline void Launch::signal(std::int32_t self, std::int32_t target, ValueId sem, std::int64_t index, std::int64_t inc) {
  if (remote_ && !devices_[static_cast<std::size_t>(target)]) {
    {
      std::lock_guard lock(mutex_);
      ++sent_;  // counted before it can be received (quiescence detection)
    }
    remote_->signal(rt_.owner(target, program_->mesh.size()), transport::RemoteSignal{number_, self, target, static_cast<std::int32_t>(sem), index, inc});
    return;
  }
  std::lock_guard lock(mutex_);
  std::int64_t& c = counter(target, sem, index);
  if (races_) races_->release(self, &c);
  c += inc;
  if (timeline_) timeline_->semaphore(target, sem, index, c);
  wake_locked(target, &c);
  if (!pending_.empty()) poke_locked(&c);
}

inline bool Launch::wait(Device& dev, const Op& op, ValueId sem, std::int64_t index, std::int64_t value) {
  const std::int32_t self = dev.id;
  std::unique_lock lock(mutex_);
  std::int64_t& c = counter(self, sem, index);
  if (c < value && !pending_.empty()) run_pending_locked(&c);
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
    if (timeline_) timeline_->waited(self, c, value, sem, index);
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

inline void Launch::copy(Device& dev, const Op& op, const CopyRequest& r) {
  const std::int32_t self = dev.id;
  if (remote_ && !devices_[static_cast<std::size_t>(r.target)]) {
    remote_copy(self, op, r);
    return;
  }
  const auto fill = [&](CopyJob& job) {
    job.src = r.src;
    job.dst = r.dst;
    job.dst.buffer = devices_[static_cast<std::size_t>(r.target)]->ctx->storage(r.dst_ref);
    job.reduce = r.reduce;
    job.source = self;
    job.target = r.target;
    job.recv_sem = r.recv_sem;
    job.recv_index = r.recv_index;
    job.send_sem = r.send_sem;
    job.send_index = r.send_index;
    job.bytes = static_cast<std::int64_t>(r.src.bytes());
    // Pointer lookups only (barrier semaphores have the runtime's own lock).
    job.recv_counter = &counter(job.target, job.recv_sem, job.recv_index);
    if (job.send_sem != no_id) job.send_counter = &counter(job.source, job.send_sem, job.send_index);
    if (timeline_) job.trace = timeline_->copy_started(self, op, job);
  };
  const auto run_here = [&](CopyJob& job) {
    timed_copy(job.trace, 0, rt_.pool(), [&] { copy_region(job.src, job.dst, job.reduce); });
    std::lock_guard lock(mutex_);
    complete_copy_locked(job);
  };
  const RuntimeOptions& o = rt_.options();
  const bool runs_inline = !is_contiguous(r.src) || !is_contiguous(r.dst) || r.src.bytes() <= o.inline_copy_bytes ||
                           rt_.pool().size() < 2;
  if (runs_inline && !o.lazy_copies && !races_) {
    // The common case, a small copy: no allocation, and one lock to complete it.
    CopyJob job;
    fill(job);
    run_here(job);
    return;
  }
  auto job = std::make_shared<CopyJob>();
  fill(*job);
  {
    std::lock_guard lock(mutex_);
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
  if (runs_inline) {
    run_here(*job);
    return;
  }
  // Split so that every worker can help; the last chunk to finish completes it.
  const std::int64_t n = job->src.elements();
  const auto es = static_cast<std::int64_t>(size_of(job->src.buffer->dtype()));
  job->per = std::max<std::int64_t>(1, static_cast<std::int64_t>(o.copy_chunk_bytes) / es);
  job->chunks = static_cast<int>((n + job->per - 1) / job->per);
  job->remaining.store(job->chunks);
  if (job->trace) job->trace->chunked(job->chunks, job->per * es);
  {
    std::lock_guard lock(mutex_);
    ++inflight_;
  }
  // A device whose next op waits has nothing to overlap the copy with: it
  // keeps the copy, and runs it itself if that wait would park (wait()).
  // Otherwise the pool takes it now; the device still helps with chunks
  // left over when it comes to wait.
  std::erase_if(dev.copies, [](const auto& j) { return j->next.load(std::memory_order_relaxed) >= j->chunks; });
  dev.copies.push_back(job);
  if (!waits_next(*dev.ctx)) offer_copies(dev);
}

inline void Launch::offer_copies(Device& dev) {
  for (const auto& job : dev.copies)
    if (!job->offered) offer(job, job->chunks);
}

inline void Launch::offer(const std::shared_ptr<CopyJob>& job, int tasks) {
  job->offered = true;
  for (int t = 0; t < tasks; ++t) rt_.pool().push([self = shared_from_this(), job] { self->run_chunks(*job); });
}

inline void Launch::run_chunks(CopyJob& job) {
  const std::int64_t n = job.src.elements();
  for (int c; (c = job.next.fetch_add(1, std::memory_order_relaxed)) < job.chunks;) {
    const std::int64_t b = c * job.per, e = std::min(n, b + job.per);
    timed_copy(job.trace, static_cast<std::size_t>(c), rt_.pool(),
               [&] { copy_contiguous(job.src, job.dst, job.reduce, b, e); });
    if (job.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::unique_lock lock(mutex_);
      complete_copy_locked(job);
      --inflight_;
      finish_if_idle(lock);
    }
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
  if (job.trace) timeline_->copy_completed(job);
  stats_.bytes_copied += job.bytes;
  ++stats_.copies;
}

inline void Launch::run_copy_locked(CopyJob& job) {
  timed_copy(job.trace, 0, rt_.pool(), [&] { copy_region(job.src, job.dst, job.reduce); });
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
    if (dev && dev->state == State::parked && dev->park_counter == c) {
      dev->state = State::queued;
      --parked_;
      ++active_;
      ++stats_.wakeups;
      push_locked(dev->id);
    }
}

inline void Launch::fail_locked(std::exception_ptr error, bool remote) {
  if (error_) return;  // the first failure is the root cause
  error_ = std::move(error);
  failed_.store(true, std::memory_order_release);
  for (auto& dev : devices_)
    if (dev && dev->state == State::parked) {
      dev->state = State::done;
      --parked_;
    }
  if (remote_ && !remote) {
    // Release every other rank's devices now; the coordinator reports this
    // rank's cause (the lowest rank's, if several failed on their own).
    try {
      std::rethrow_exception(error_);
    } catch (const std::exception& e) {
      local_error_ = e.what();
    } catch (...) {
      local_error_ = "refx: unknown exception";
    }
    local_error_ += fmt::format(" [MPI rank {}]", remote_->placement().rank);
    remote_->failed(number_, local_error_);
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
  if (remote_) {
    // Locally idle: the coordinator decides, across ranks, whether the
    // launch is over (a device parked here may still be signalled).
    if (chains_) {
      emit_locked(lock);
      if (emitting_ || completed_ || active_ > 0 || inflight_ > 0) return;
    }
    if (reported_sent_ == sent_ && reported_received_ == received_) return;  // nothing new
    reported_sent_ = sent_;
    reported_received_ = received_;
    transport::Report r = report_locked(0);
    lock.unlock();
    remote_->report(std::move(r));
    return;
  }
  if (!error_ && parked_ > 0) {
    error_ = std::make_exception_ptr(RuntimeError(deadlock_report()));
    for (auto& dev : devices_)
      if (dev->state == State::parked) dev->state = State::done;
    parked_ = 0;
  }
  // Every device has stopped: perform the ordered effects still buffered
  // before the launch completes. If another worker is emitting, it completes
  // the launch when it is done (it calls finish_if_idle afterwards).
  if (chains_) {
    emit_locked(lock);
    if (emitting_ || completed_ || active_ > 0 || inflight_ > 0) return;
  }
  complete(lock, error_, stats_);
}

inline void Launch::complete(std::unique_lock<std::mutex>& lock, std::exception_ptr error, const LaunchStats& stats) {
  completed_ = true;
  lock.unlock();
  if (!error && !remote_) error = check_exit_invariants();
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
  if (timeline_) rt_.timeline_finished(std::move(timeline_), error);
  if (remote_) remote_->finished(number_);
  // Nothing refers to the devices' storage any more (the transport has let
  // go of the launch too): the next launch of the program takes it over
  // instead of allocating its own.
  if (!error)
    for (auto& dev : devices_)
      if (dev) program_->contexts.give(std::move(dev->ctx), devices_.size());
  event_->set(error);
  rt_.launch_finished();
}

inline std::exception_ptr Launch::check_exit_invariants() {
  std::string problems = unbalanced_lines();
  if (problems.empty()) return nullptr;
  return std::make_exception_ptr(RuntimeError(fmt::format(
      "refx: kernel '{}' ended with semaphores not back to 0 (every signal must be waited and every copy "
      "waited):\n{}",
      program_->name, problems)));
}

inline std::string Launch::unbalanced_lines() {
  std::vector<std::string> problems;
  const Graph& g = program_->graph;
  for (const auto& dev : devices_) {
    if (!dev) continue;
    dev->ctx->for_each_scoped([&](ValueId v, const Buffer& b) {
      if (!g.type(v).is_semaphore()) return;
      for (std::int64_t i = 0; i < b.size(); ++i)
        if (const std::int64_t c = b.data<std::int64_t>()[i]; c != 0)
          problems.push_back(fmt::format("  device {}: {}{} ends at {}{}", dev->id, semaphore_name(program_->graph, v),
                                         b.size() > 1 ? fmt::format("[{}]", i) : "", c,
                                         g.type(v).semaphore == SemaphoreKind::dma
                                             ? " (bytes of a copy started and never waited, or sent and not received)"
                                             : ""));
    });
    for (std::int64_t id : program_->barrier_ids)
      if (const std::int64_t c = *rt_.barrier(dev->id, id).data<std::int64_t>(); c != 0)
        problems.push_back(fmt::format("  device {}: barrier semaphore (collective id {}) ends at {}", dev->id, id, c));
  }
  return fmt::format("{}", fmt::join(problems, "\n"));
}

inline std::string Launch::deadlock_report() const {
  return fmt::format("refx: deadlock in kernel '{}' on mesh {}: no device can make progress, no copy is in flight\n{}",
                     program_->name, program_->mesh.describe(), parked_lines());
}

inline std::string Launch::parked_lines() const {
  std::vector<std::string> lines;
  const Graph& g = program_->graph;
  for (const auto& dev : devices_) {
    if (!dev || dev->state != State::parked) continue;
    const Op* op = dev->park_op;
    lines.push_back(fmt::format("  device {}: {} on {}{} has {}, wants {} (at {})", dev->id,
                                op ? op->prim->name : "wait", semaphore_name(program_->graph, dev->park_sem),
                                g.type(dev->park_sem).shape.rank() ? fmt::format("[{}]", dev->park_index) : "",
                                dev->park_counter ? *dev->park_counter : 0, dev->park_wanted,
                                op ? op->loc : SourceLoc{}));
  }
  return fmt::format("{}", fmt::join(lines, "\n"));
}

inline void Launch::Device::before_op(ExecContext& c, const Op& op) {
  if (launch.timeline_) launch.timeline_->op_begins(id, op);
  if (!launch.races_) return;
  if (op.prim == &prim::dma_start || op.prim == &prim::dma_wait) return;  // copies log themselves
  const Graph& g = c.graph();
  for (const Effect& e : g.effects(op)) {
    if (e.view == no_id || !(e.bits & (effect_read | effect_write | effect_accum))) continue;
    const bool write = (e.bits & (effect_write | effect_accum)) != 0;
    launch.races_->access(id, c.resolve(e.view, op.loc), write, write ? "write" : "read", op.loc);
  }
}

inline bool Launch::Device::poisons_scratch() const {
  const RuntimeOptions& o = launch.rt_.options();
  return o.detect_races || o.lazy_copies;
}

inline Buffer& Launch::Device::barrier_semaphore(std::int64_t collective_id) {
  return launch.rt_.barrier(id, collective_id);
}

}  // namespace refx
