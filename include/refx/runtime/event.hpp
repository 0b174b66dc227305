#pragma once
// A one-shot completion event carrying an optional error. Waiters on the
// host help the worker pool instead of sleeping while there is work.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <refx/core/error.hpp>
#include <refx/runtime/worker_pool.hpp>

namespace refx {

namespace detail {
/// The runtime whose program this thread is performing a host effect of (a
/// debug_print sink or an io_callback), or null.
inline const void*& host_effect_runtime() noexcept {
  thread_local const void* runtime = nullptr;
  return runtime;
}
/// What a failure says: its what(), or `unknown` for a non-std exception.
inline std::string message_of(const std::exception_ptr& error, const char* unknown) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return unknown;
  }
}
}  // namespace detail

class Event {
 public:
  /// `runtime`: the runtime whose launch sets the event (null: none).
  explicit Event(const void* runtime = nullptr) noexcept : runtime_(runtime) {}

  /// Sets the event, once.
  void set(std::exception_ptr error = nullptr) {
    {
      std::lock_guard lock(mutex_);
      error_ = std::move(error);
      done_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
  }
  bool ready() const noexcept { return done_.load(std::memory_order_acquire); }
  /// Waits (running pool tasks meanwhile) and rethrows the event's error.
  /// With nothing to help with, a helping waiter polls briefly before it
  /// sleeps: a launch usually ends within microseconds of its last task, and
  /// a sleeping thread takes a futex wake-up (tens of microseconds on a
  /// loaded machine) to come back. Polling yields, for at most the pool's
  /// poll window (1 ms by default) after the last thing this thread did. A
  /// host thread also does the transport's work while it polls
  /// (WorkerPool::set_host_helper).
  void wait(WorkerPool* helping = nullptr) const {
    if (ready()) {
      rethrow_error();
      return;
    }
    // A runtime runs one launch at a time, and the one running a host effect
    // cannot finish before the effect returns: waiting there for another
    // launch of that runtime would never end.
    if (runtime_ != nullptr && !ready() && detail::host_effect_runtime() == runtime_)
      throw Error(
          "refx: a debug_print sink or an io_callback waits for a program of the runtime that is running it "
          "(block_until_ready, to_host, a token's wait or effects_barrier); that runtime runs one program at a time "
          "and the calling program cannot finish before the callback returns; wait on the host after dispatch, or "
          "give the programs the callback runs a Runtime of their own");
    if (helping == nullptr) {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return ready(); });
    } else {
      const std::function<bool()>* help = helping->host_helper();
      struct Release {  // the transport's own thread takes over again, even on an exception
        WorkerPool& pool;
        const std::function<bool()>*& help;
        ~Release() {
          if (help) pool.host_helper_done();
        }
      } release{*helping, help};
      bool polled = false;  // since the last thing this thread did
      while (!ready()) {
        if (helping->run_one()) {
          polled = false;
          continue;
        }
        if (!polled) {
          polled = true;
          bool helped = false;
          if (poll_briefly([&] { return ready() || helping->has_work() || (help && (helped = (*help)())); },
                           helping->poll_window())) {
            polled = !helped;
            continue;
          }
          if (help) {  // nothing to do for a poll window: the transport's own thread takes over
            helping->host_helper_done();
            help = nullptr;
          }
        }
        // Queued tasks do not signal this event: sleep in short slices.
        std::unique_lock lock(mutex_);
        cv_.wait_for(lock, std::chrono::microseconds(200), [&] { return ready() || helping->has_work(); });
      }
    }
    rethrow_error();
  }
  /// The event's error; null while it is not set.
  std::exception_ptr error() const { return ready() ? error_ : nullptr; }

 private:
  // error_ is written once, before done_ is (with release): whoever has read
  // done_ as true reads it without the lock.
  void rethrow_error() const {
    if (error_) std::rethrow_exception(error_);
  }

  const void* runtime_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::atomic<bool> done_{false};
  std::exception_ptr error_;
};

}  // namespace refx
