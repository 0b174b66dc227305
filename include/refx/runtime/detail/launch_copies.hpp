#pragma once
// Launch (detail/launch.hpp): copies a device starts. Which policy moves the
// bytes is copy_policy()'s (copy_policies.hpp); here a copy is filled in,
// handed to its policy, and completed: its semaphores rise under the lock.

#include <refx/runtime/detail/launch_devices.hpp>

namespace refx::detail {

inline void Launch::fill(CopyJob& job, Device& dev, const Op& op, const CopyRequest& r) {
  fill_job(job, r, dev.id, r.target, device(r.target).ctx->storage(r.dst_ref));
  // Pointer lookups only (barrier semaphores have the runtime's own lock).
  job.recv_counter = &counter(job.target, job.recv_sem, job.recv_index);
  if (job.send_sem != no_id) job.send_counter = &counter(job.source, job.send_sem, job.send_index);
  if (observers_.any()) observers_.each([&](LaunchObserver& o) { o.on_copy(dev.id, op, job); });
}

inline void Launch::copy(Device& dev, const Op& op, const CopyRequest& r) {
  if (ctx_.remote && !here(r.target)) {
    remote_copy(dev.id, op, r);
    return;
  }
  switch (copy_policy(r.src, r.dst, options_, pool_.size())) {
    case CopyPolicy::inline_copy: {
      // The common case, a small copy: no allocation, and one lock to complete it.
      CopyJob job;
      fill(job, dev, op, r);
      move_whole(job, pool_);
      std::lock_guard lock(sched_.mutex());
      complete_copy_locked(job);
      return;
    }
    case CopyPolicy::lazy: {
      auto job = std::make_shared<CopyJob>();
      fill(*job, dev, op, r);
      std::lock_guard lock(sched_.mutex());
      lazy_.add(job);
      sched_.poke_locked(job->recv_counter);
      if (job->send_counter) sched_.poke_locked(job->send_counter);
      return;
    }
    case CopyPolicy::chunked: {
      auto job = std::make_shared<CopyJob>();
      fill(*job, dev, op, r);
      copy_chunked(dev, std::move(job));
      return;
    }
  }
}

// A device whose next op waits has nothing to overlap the copy with: it
// keeps the copy, and runs it itself if that wait would park (wait()).
// Otherwise the pool takes it now; the device still helps with chunks left
// over when it comes to wait.
inline void Launch::copy_chunked(Device& dev, std::shared_ptr<CopyJob> job) {
  split(*job, options_.copy_chunk_bytes);
  {
    std::lock_guard lock(sched_.mutex());
    sched_.copy_started_locked();
  }
  std::erase_if(dev.copies, [](const auto& j) { return claimed(*j); });
  dev.copies.push_back(std::move(job));
  if (!Device::waits_next(*dev.ctx)) offer_copies(dev);
}

inline void Launch::offer_copies(Device& dev) {
  for (const auto& job : dev.copies)
    if (!job->offered) offer(job, job->chunks);
}

inline void Launch::offer(const std::shared_ptr<CopyJob>& job, int tasks) {
  job->offered = true;
  for (int t = 0; t < tasks; ++t) pool_.push([self = shared_from_this(), job] { self->run_chunks(*job); });
}

inline void Launch::run_chunks(CopyJob& job) {
  detail::run_chunks(job, pool_, [&] {
    std::unique_lock lock(sched_.mutex());
    complete_copy_locked(job);
    sched_.copy_ended_locked();
    finish_if_idle(lock);
  });
}

inline void Launch::complete_copy_locked(const CopyJob& job) {
  *job.recv_counter += job.recv_inc;
  sched_.wake_locked(job.target, job.recv_counter);
  if (job.send_counter) {
    *job.send_counter += job.send_inc;
    sched_.wake_locked(job.source, job.send_counter);
  }
  if (observers_.any()) observers_.each([&](LaunchObserver& o) { o.on_copy_landed(job); });
  stats_.bytes_copied += job.bytes;
  ++stats_.copies;
}

inline void Launch::run_lazy_locked(CopyJob& job) {
  move_whole(job, pool_);
  complete_copy_locked(job);
}

}  // namespace refx::detail
