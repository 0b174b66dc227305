#pragma once
// Helpers for the effects tests (tests/effects/*_test.cpp): a print capture,
// a thread-safe log and a watchdog so that no test can hang; the message of
// an expected exception is support/runtime_testing.hpp's runtime_error_of.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace refx::effects_testing {

/// Captures a runtime's debug_print output, one entry per print.
class PrintCapture {
 public:
  explicit PrintCapture(Runtime& rt) {
    rt.set_print_sink([this](std::string_view s) {
      std::lock_guard lock(mutex_);
      lines_.emplace_back(s);
    });
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    lines_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

/// A log written by callbacks (possibly from several workers).
template <class T>
class Log {
 public:
  void add(T v) {
    std::lock_guard lock(mutex_);
    items_.push_back(std::move(v));
  }
  std::vector<T> items() const {
    std::lock_guard lock(mutex_);
    return items_;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<T> items_;
};

/// The shared test watchdog (support/runtime_testing.hpp) with the effects
/// tests' default limit.
struct Watchdog : testing::Watchdog {
  explicit Watchdog(std::chrono::milliseconds limit = std::chrono::milliseconds(30000))
      : testing::Watchdog(limit, "effects test") {}
};

/// The message of the RuntimeError `f` throws (support/runtime_testing.hpp).
using testing::runtime_error_of;

inline bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

/// One i32 per device, shape [1]: the input that names a dispatch.
inline Array scalar_array(std::int32_t devices, std::int32_t value, Runtime& rt) {
  return Array::generate<std::int32_t>(devices, Shape{1}, [&](int, std::int64_t) { return value; }, rt);
}

}  // namespace refx::effects_testing
