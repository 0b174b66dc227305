#pragma once
// Helpers for the runtime tests (tests/runtime/*_test.cpp): device-count
// parameters, a watchdog so that no test can hang, timing and CPU-time
// probes, counter deltas, and the ring arithmetic the kernels use.

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/testing.hpp"

namespace refx::testing {

/// True in sanitizer builds (the tsan / asan presets): tests shrink their
/// workloads and widen their time bounds, and skip the ones that plant real
/// data races on purpose.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

/// True under ThreadSanitizer, which aborts on the data races some checked-mode
/// tests plant on purpose (the race detector must find them).
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

/// The device counts every runtime behaviour is checked on.
inline auto device_counts() { return ::testing::Values(1, 2, 4, 8); }

/// Names parameterised tests "N1", "N2", ... instead of "0", "1", ...
struct DeviceCountName {
  std::string operator()(const ::testing::TestParamInfo<int>& info) const { return "N" + std::to_string(info.param); }
};

/// Aborts the whole test binary if the enclosing scope runs longer than
/// `limit` (a hung runtime must fail the test, not stall ctest until its
/// timeout). The message names what was running.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::milliseconds limit, std::string what = "test")
      : what_(std::move(what)), thread_([this, limit] {
          std::unique_lock lock(mutex_);
          if (!cv_.wait_for(lock, limit, [&] { return done_; })) {
            std::fprintf(stderr, "\nrefx test watchdog: '%s' did not finish within %lld ms (a hang); aborting\n",
                         what_.c_str(), static_cast<long long>(limit.count()));
            std::fflush(stderr);
            std::_Exit(3);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::string what_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: starts once the state above exists
};

/// The bound of one runtime test body (ctest's per-test timeout is 120 s).
inline constexpr std::chrono::milliseconds kTestLimit{kSanitized ? 100000 : 60000};

/// A wall-clock bound that a test asserts, widened under sanitizers.
inline constexpr double time_bound(double seconds) { return kSanitized ? 20 * seconds : seconds; }

/// Compile passes without the static verifier: for kernels that break a rule
/// on purpose (a semaphore left non-zero, a wait nobody signals, a read
/// before a wait, two copies on one semaphore) so that the *runtime's*
/// detection is what the test exercises. Use as kernel(...).passes(unverified()).
inline passes::Options unverified() {
  passes::Options o;
  o.verify = false;
  return o;
}

/// Wall-clock seconds `f` takes.
template <class F>
double seconds_of(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The shortest wall-clock time of up to `attempts` runs of `f`, stopping at
/// the first run faster than `bound` seconds. For wall-clock assertions on a
/// shared (or CPU-throttled) machine: a hiccup of the machine rarely repeats,
/// while something slow by design (a timeout, a sleep) is slow every time.
template <class F>
double shortest_of(int attempts, double bound, F&& f) {
  double best = 1e30;
  for (int a = 0; a < attempts && best >= bound; ++a) best = std::min(best, seconds_of(f));
  return best;
}

/// CPU seconds (user + system) used by the whole process so far.
inline double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/// What a runtime's counters grew by since construction.
class StatsDelta {
 public:
  explicit StatsDelta(Runtime& rt = Runtime::global()) : rt_(rt), base_(rt.totals()), launches_(rt.launches()) {}
  LaunchStats get() const {
    const LaunchStats now = rt_.totals();
    return LaunchStats{.bytes_copied = now.bytes_copied - base_.bytes_copied,
                       .copies = now.copies - base_.copies,
                       .parks = now.parks - base_.parks,
                       .wakeups = now.wakeups - base_.wakeups,
                       .contexts_built = now.contexts_built - base_.contexts_built,
                       .bound = now.bound - base_.bound,
                       .inlined = now.inlined - base_.inlined,
                       .forwarded = now.forwarded - base_.forwarded};
  }
  std::int64_t launches() const { return rt_.launches() - launches_; }

 private:
  Runtime& rt_;
  LaunchStats base_;
  std::int64_t launches_;
};

/// Python-style modulo on the host (the kernels add the size before %).
inline int mod(int i, int n) { return ((i % n) + n) % n; }

/// The value the test inputs put at element i of device d.
inline float tag(int d, std::int64_t i) { return static_cast<float>(d * 100000 + i); }

/// Checks that every device d of `a` holds `want(d, i)` at every element i.
template <class T, class F>
::testing::AssertionResult all_shards_match(const Array& a, F&& want) {
  for (int d = 0; d < a.num_devices(); ++d) {
    const std::vector<T> got = a.to_host<T>(d);
    for (std::size_t i = 0; i < got.size(); ++i) {
      const T w = static_cast<T>(want(d, static_cast<std::int64_t>(i)));
      if (!(got[i] == w))
        return ::testing::AssertionFailure() << "device " << d << " element " << i << ": got " << +got[i]
                                             << ", expected " << +w;
    }
  }
  return ::testing::AssertionSuccess();
}

/// Runs `f`, which must throw refx::RuntimeError (from block_until_ready),
/// and returns its message; records a failure otherwise.
template <class F>
std::string runtime_error_of(F&& f) {
  try {
    f();
  } catch (const RuntimeError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected refx::RuntimeError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected refx::RuntimeError, nothing was thrown";
  return {};
}

/// Runs `f`, which must throw refx::Error (or a subclass), and returns its message.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected refx::Error, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected refx::Error, nothing was thrown";
  return {};
}

/// The lines of `s` that contain `needle`.
inline std::vector<std::string> lines_with(const std::string& s, const std::string& needle) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    std::size_t e = s.find('\n', b);
    if (e == std::string::npos) e = s.size();
    std::string line = s.substr(b, e - b);
    if (line.find(needle) != std::string::npos) out.push_back(std::move(line));
    b = e + 1;
  }
  return out;
}

/// "runtime/<file>:<line>", as refx prints a user's source location.
inline std::string here(const char* file, int line) {
  std::string f = file;
  const auto cut = f.rfind('/');
  if (cut != std::string::npos && cut > 0) {
    const auto cut2 = f.rfind('/', cut - 1);
    if (cut2 != std::string::npos) f = f.substr(cut2 + 1);
  }
  return f + ":" + std::to_string(line);
}

}  // namespace refx::testing
