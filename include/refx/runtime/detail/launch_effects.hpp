#pragma once
// Launch (detail/launch.hpp): its ordering with other work (docs/effects.md,
// docs/runtime.md "Ordering through data"): waiting for argument Arrays that
// other launches still produce or read, and performing host effects
// (debug_print, io_callback), the ordered ones through the sequencer.

#include <utility>

#include <refx/runtime/detail/launch_devices.hpp>

namespace refx::detail {

// Input dependencies (kernel.hpp collects them at dispatch). An argument
// Array may still be in production when this launch starts, or, if this
// launch writes it, still be read by an earlier launch: on this Runtime that
// cannot happen (launches run one at a time, in dispatch order), on another
// one it can, and then this launch waits (its worker helps this runtime's
// pool meanwhile; the launch queue is blocked behind it anyway). An input
// produced by a failed call has no result: this launch fails with the cause
// instead of computing on garbage (a failed reader of an output is no reason
// to fail).
inline std::exception_ptr Launch::wait_for_inputs() {
  std::exception_ptr failure;
  for (const InputDependency& dep : ctx_.inputs) {
    try {
      dep.event->wait(&pool_);
    } catch (const std::exception& e) {
      if (dep.input && !failure) {
        try {
          std::throw_with_nested(RuntimeError(fmt::format(
              "refx: kernel '{}': input {} comes from a call that failed: {}", program().name, dep.index, e.what())));
        } catch (...) {
          failure = std::current_exception();
        }
      }
    } catch (...) {
      if (dep.input && !failure)
        failure = std::make_exception_ptr(RuntimeError(
            fmt::format("refx: kernel '{}': input {} comes from a call that failed", program().name, dep.index)));
    }
  }
  ctx_.inputs.clear();
  return failure;
}

// Marked as this runtime's while it runs: a wait there for another launch of
// the runtime is an error, not a hang (Event::wait).
inline std::exception_ptr Launch::perform(HostEffect& e, const Op& op, std::int32_t d) {
  const void* const outer = std::exchange(host_effect_runtime(), ctx_.runtime);
  std::exception_ptr error = perform_host_effect(e, op, print_, d);
  host_effect_runtime() = outer;
  return error;
}

inline void Launch::host_effect(std::int32_t d, const Op& op, std::unique_ptr<HostEffect> e) {
  // After a failure the devices are being released: effects they reach now
  // are dropped (what was reached before the failure still runs).
  if (failed_.load(std::memory_order_acquire)) return;
  if (!e->ordered || !effects_.active()) {
    // Unordered effects, and every effect of a one-device program (whose
    // program order is the order), run now on this worker.
    std::exception_ptr error = perform(*e, op, d);
    if (error) {
      {
        std::lock_guard lock(sched_.mutex());
        fail_locked(error);
      }
      std::rethrow_exception(error);  // stops this device; error_ keeps the first failure
    }
    return;
  }
  std::unique_lock lock(sched_.mutex());
  effects_.buffer_locked(d, op, std::move(e));
  emit_locked(lock);
}

inline void Launch::emit_locked(std::unique_lock<std::mutex>& lock) {
  effects_.emit_locked(
      lock, [&](std::int32_t d) { return !here(d) || sched_.done(d); },
      [&](EffectSequencer::Pending& p) { return perform(*p.effect, *p.op, p.device); },
      [&](std::exception_ptr error) { fail_locked(std::move(error)); });
}

}  // namespace refx::detail
