#pragma once
// The copy policies of a launch: how a started copy's bytes move. Inline: on
// the starting device's thread, at once (small or strided copies, one
// worker). Chunked: split so that every worker can help; pool tasks and the
// starting device claim chunks, whoever finishes the last one completes it.
// Lazy (checked mode): held until someone waits on its semaphore or the
// kernel ends, exposing code that reads before it waits. Which one applies
// is copy_policy(); completing a copy (its semaphores) is the launch's.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <refx/runtime/detail/copy_job.hpp>
#include <refx/runtime/detail/launch_timeline.hpp>
#include <refx/runtime/options.hpp>
#include <refx/runtime/worker_pool.hpp>

namespace refx::detail {

enum class CopyPolicy : std::uint8_t { inline_copy, chunked, lazy };

inline CopyPolicy copy_policy(const ResolvedView& src, const ResolvedView& dst, const RuntimeOptions& o,
                              std::size_t workers) {
  if (o.lazy_copies) return CopyPolicy::lazy;
  const bool small = !is_contiguous(src) || !is_contiguous(dst) || src.bytes() <= o.inline_copy_bytes || workers < 2;
  return small ? CopyPolicy::inline_copy : CopyPolicy::chunked;
}

/// Inline (and lazy, when its turn comes): the whole copy on this thread.
inline void move_whole(CopyJob& job, const WorkerPool& pool) {
  timed_copy(job.trace, 0, pool, [&] { copy_region(job.src, job.dst, job.reduce); });
}

/// Chunked: splits `job` into chunks of about `chunk_bytes`.
inline void split(CopyJob& job, std::size_t chunk_bytes) {
  const std::int64_t n = job.src.elements();
  const auto es = static_cast<std::int64_t>(size_of(job.src.buffer->dtype()));
  job.per = std::max<std::int64_t>(1, static_cast<std::int64_t>(chunk_bytes) / es);
  job.chunks = static_cast<int>((n + job.per - 1) / job.per);
  job.remaining.store(job.chunks);
  if (job.trace) job.trace->chunked(job.chunks, job.per * es);
}

/// Chunked: runs unclaimed chunks of `job` until none is left; whoever moves
/// the last one calls `last()`.
template <class Last>
void run_chunks(CopyJob& job, const WorkerPool& pool, Last&& last) {
  const std::int64_t n = job.src.elements();
  for (int c; (c = job.next.fetch_add(1, std::memory_order_relaxed)) < job.chunks;) {
    const std::int64_t b = c * job.per, e = std::min(n, b + job.per);
    timed_copy(job.trace, static_cast<std::size_t>(c), pool,
               [&] { copy_contiguous(job.src, job.dst, job.reduce, b, e); });
    if (job.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) last();
    // Between chunks, let a thread that shares this core run: with more
    // threads than cores, one may hold a device that has yet to start its
    // own copies, and would wait for the whole of this one otherwise.
    if (job.next.load(std::memory_order_relaxed) < job.chunks) std::this_thread::yield();
  }
}

/// Chunked: whether every chunk of `job` was claimed.
inline bool claimed(const CopyJob& job) { return job.next.load(std::memory_order_relaxed) >= job.chunks; }

/// Lazy: the copies started and not yet run (under the launch's lock).
class LazyCopies {
 public:
  bool empty() const noexcept { return pending_.empty(); }
  void add(std::shared_ptr<CopyJob> job) { pending_.push_back(std::move(job)); }
  /// Runs, latest first, the pending copies that advance `counter`.
  template <class Run>
  void run_for(const std::int64_t* counter, Run&& run) {
    for (std::size_t i = pending_.size(); i-- > 0;) {
      if (pending_[i]->recv_counter != counter && pending_[i]->send_counter != counter) continue;
      auto job = std::move(pending_[i]);
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      run(*job);
    }
  }
  /// Runs every pending copy (the kernel ended: nobody waited for them).
  template <class Run>
  void drain(Run&& run) {
    while (!pending_.empty()) {
      auto job = std::move(pending_.back());
      pending_.pop_back();
      run(*job);
    }
  }

 private:
  std::vector<std::shared_ptr<CopyJob>> pending_;
};

}  // namespace refx::detail
