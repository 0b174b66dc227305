#pragma once
// A one-shot completion event carrying an optional error. Waiters on the
// host help the worker pool instead of sleeping while there is work.

#include <condition_variable>
#include <exception>
#include <mutex>

#include <refx/runtime/worker_pool.hpp>

namespace refx {

class Event {
 public:
  void set(std::exception_ptr error = nullptr) {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
      error_ = std::move(error);
    }
    cv_.notify_all();
  }
  bool ready() const {
    std::lock_guard lock(mutex_);
    return done_;
  }
  /// Waits (running pool tasks meanwhile) and rethrows the event's error.
  void wait(WorkerPool* helping = nullptr) const {
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        if (done_) break;
        if (helping == nullptr) {
          cv_.wait(lock, [&] { return done_; });
          break;
        }
      }
      if (!helping->run_one()) {
        std::unique_lock lock(mutex_);
        cv_.wait_for(lock, std::chrono::microseconds(200), [&] { return done_; });
      }
    }
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }
  std::exception_ptr error() const {
    std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace refx
