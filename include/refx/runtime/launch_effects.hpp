#pragma once
// Launch's ordering with other work (docs/effects.md): waiting for input
// Arrays that are still being produced, and performing host effects
// (debug_print, io_callback) in their deterministic order.

#include <utility>

#include <refx/runtime/runtime.hpp>

namespace refx {

// Input dependencies. An argument Array may still be in production when this
// launch starts, or, if this launch writes it, still be read by an earlier
// launch: on this Runtime that cannot happen (launches run one at a time, in
// dispatch order), on another one it can, and then this launch waits (its
// worker helps this runtime's pool meanwhile; the launch queue is blocked
// behind it anyway). An input produced by a failed call has no result: this
// launch fails with the cause instead of computing on garbage (a failed
// reader of an output is no reason to fail).
inline std::exception_ptr Launch::wait_for_inputs() {
  std::exception_ptr failure;
  for (const InputDependency& dep : inputs_) {
    try {
      dep.event->wait(&rt_.pool());
    } catch (const std::exception& e) {
      if (dep.input && !failure) {
        try {
          std::throw_with_nested(RuntimeError(fmt::format(
              "refx: kernel '{}': input {} comes from a call that failed: {}", program_->name, dep.index, e.what())));
        } catch (...) {
          failure = std::current_exception();
        }
      }
    } catch (...) {
      if (dep.input && !failure)
        failure = std::make_exception_ptr(RuntimeError(fmt::format(
            "refx: kernel '{}': input {} comes from a call that failed", program_->name, dep.index)));
    }
  }
  inputs_.clear();
  return failure;
}

// ---- host effects (issue 6) ------------------------------------------------

// Marked as this runtime's while it runs: a wait there for another launch of
// the runtime is an error, not a hang (Event::wait).
inline std::exception_ptr Launch::perform(HostEffect& e, const Op& op, std::int32_t d) {
  const void* const outer = std::exchange(detail::host_effect_runtime(), &rt_);
  std::exception_ptr error = perform_host_effect(e, op, print_, d);
  detail::host_effect_runtime() = outer;
  return error;
}

inline void Launch::host_effect(std::int32_t d, const Op& op, std::unique_ptr<HostEffect> e) {
  // After a failure the devices are being released: effects they reach now
  // are dropped (what was reached before the failure still runs).
  if (failed_.load(std::memory_order_acquire)) return;
  if (!e->ordered || !chains_) {
    // Unordered effects, and every effect of a one-device program (whose
    // program order is the order), run now on this worker.
    std::exception_ptr error = perform(*e, op, d);
    if (error) {
      {
        std::lock_guard lock(mutex_);
        fail_locked(error);
      }
      std::rethrow_exception(error);  // stops this device; error_ keeps the first failure
    }
    return;
  }
  std::unique_lock lock(mutex_);
  Chain& c = (*chains_)[e->token - 1u];
  const std::int64_t seq = c.reached[static_cast<std::size_t>(d)]++;
  if (c.broken) return;
  c.queues[static_cast<std::size_t>(d)].push_back(PendingEffect{seq, d, &op, std::move(e)});
  ++c.buffered;
  emit_locked(lock);
}

// The next effect of chain `c` in (sequence, device) order, if its turn has
// come: every earlier slot was performed, or belongs to a device that has
// finished (or has passed it without an effect of this kind).
inline bool Launch::next_effect_locked(Chain& c, PendingEffect& out) {
  const auto n = static_cast<std::int32_t>(devices_.size());
  while (c.buffered > 0 && !c.broken) {
    if (c.dev == n) {
      c.dev = 0;
      ++c.seq;
      continue;
    }
    const auto d = static_cast<std::size_t>(c.dev);
    auto& q = c.queues[d];
    if (!q.empty() && q.front().seq == c.seq) {
      out = std::move(q.front());
      q.pop_front();
      --c.buffered;
      ++c.dev;
      return true;
    }
    if (c.reached[d] > c.seq || !devices_[d] || devices_[d]->state == State::done) {
      ++c.dev;  // no effect at (seq, d), and none will come
      continue;
    }
    return false;  // device d has not reached slot (seq, d) yet
  }
  return false;
}

inline void Launch::emit_locked(std::unique_lock<std::mutex>& lock) {
  if (emitting_) return;
  emitting_ = true;
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t k = 0; k < chains_->size(); ++k) {
      PendingEffect p;
      while (next_effect_locked((*chains_)[k], p)) {
        progress = true;
        lock.unlock();
        std::exception_ptr error = perform(*p.effect, *p.op, p.device);
        p.effect.reset();
        lock.lock();
        if (error) {
          // A failed effect ends its chain: what is ordered after it is dropped.
          Chain& c = (*chains_)[k];
          c.broken = true;
          for (auto& q : c.queues) q.clear();
          c.buffered = 0;
          fail_locked(error);
        }
      }
    }
  }
  emitting_ = false;
}

}  // namespace refx
