#pragma once
// Effects at dispatch: where a program's prints go (print sinks) and the
// calling thread's token state (runtime tokens per ordered effect kind,
// output tokens per device); what a program's effects are (EffectInfo) is in
// effect_info.hpp. The Runtime
// (runtime.hpp) updates tokens at dispatch and exposes them; the launch
// (detail/launch_effects.hpp, detail/effect_sequencer.hpp) performs the effects. See docs/effects.md.

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <refx/ir/eval.hpp>  // PrintSink
#include <refx/ir/host_effects.hpp>
#include <refx/runtime/effect_info.hpp>
#include <refx/runtime/event.hpp>

namespace refx {

/// A print sink and the lock that serialises calls to it (a sink never sees
/// two messages at once, so test captures need no locking).
class PrintSinkHolder {
 public:
  explicit PrintSinkHolder(PrintSink sink) : sink_(std::move(sink)) {}
  void operator()(std::string_view s) {
    std::lock_guard lock(mutex_);
    sink_(s);
  }

 private:
  std::mutex mutex_;
  PrintSink sink_;
};

/// A runtime or output token: the completion of the latest launch (from one
/// thread) with a given effect. Copyable; compares by launch.
class RuntimeToken {
 public:
  RuntimeToken() = default;
  RuntimeToken(std::shared_ptr<Event> e, std::int64_t launch) : event_(std::move(e)), launch_(launch) {}

  bool valid() const noexcept { return event_ != nullptr; }
  /// The runtime-wide launch number (dispatch order) of the launch behind it.
  std::int64_t launch() const noexcept { return launch_; }
  bool ready() const { return !event_ || event_->ready(); }
  /// Waits for the launch; rethrows its failure.
  void wait() const {
    if (event_) event_->wait();
  }
  std::exception_ptr error() const { return event_ && event_->ready() ? event_->error() : nullptr; }
  const std::shared_ptr<Event>& event() const noexcept { return event_; }
  friend bool operator==(const RuntimeToken& a, const RuntimeToken& b) noexcept { return a.event_ == b.event_; }

 private:
  std::shared_ptr<Event> event_;
  std::int64_t launch_ = 0;
};

namespace detail {

/// One thread's token state for one runtime.
struct ThreadTokens {
  std::array<RuntimeToken, num_ordered_effects> ordered;  ///< per kind: the latest launch with it
  std::vector<RuntimeToken> output;                       ///< per device: the latest launch with host effects
  /// Launches without outputs since the last barrier: nothing else reports
  /// their failure. Pruned as they finish cleanly.
  std::vector<RuntimeToken> unobserved;
  std::size_t prune_at = 64;

  bool empty() const {
    for (const auto& t : ordered)
      if (t.valid()) return false;
    for (const auto& t : output)
      if (t.valid()) return false;
    return unobserved.empty();
  }

  /// Records launch `t` (on `devices` devices) with effects `fx`; returns the
  /// ordered tokens it depends on (the previous ones of its kinds).
  void record(const RuntimeToken& t, std::int32_t devices, const LaunchEffects& fx,
              std::vector<std::shared_ptr<Event>>* deps) {
    for (std::size_t k = 0; k < num_ordered_effects; ++k)
      if (fx.ordered_mask & (1u << k)) {
        if (deps && ordered[k].valid() && !ordered[k].ready()) deps->push_back(ordered[k].event());
        ordered[k] = t;
      }
    if (fx.output_token()) {
      if (output.size() < static_cast<std::size_t>(devices)) output.resize(static_cast<std::size_t>(devices));
      for (std::int32_t d = 0; d < devices; ++d) output[static_cast<std::size_t>(d)] = t;
    }
    if (!fx.has_outputs) {
      if (unobserved.size() >= prune_at) {
        std::erase_if(unobserved, [](const RuntimeToken& u) { return u.ready() && !u.error(); });
        prune_at = std::max<std::size_t>(64, 2 * unobserved.size());
      }
      unobserved.push_back(t);
    }
  }

  /// Every distinct token, in dispatch order.
  std::vector<RuntimeToken> all() const {
    std::vector<RuntimeToken> v;
    for (const auto& t : ordered)
      if (t.valid()) v.push_back(t);
    for (const auto& t : output)
      if (t.valid()) v.push_back(t);
    v.insert(v.end(), unobserved.begin(), unobserved.end());
    std::sort(v.begin(), v.end(), [](const RuntimeToken& a, const RuntimeToken& b) { return a.launch() < b.launch(); });
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }
  void clear() {
    ordered = {};
    output.clear();
    unobserved.clear();
    prune_at = 64;
  }

  /// At thread exit: the barrier still runs (effects finish); failures nobody
  /// reported go to stderr, since a thread's exit cannot throw.
  ~ThreadTokens() {
    for (const RuntimeToken& t : all()) {
      try {
        t.wait();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "refx: effects_barrier at thread exit: %s\n", e.what());
      } catch (...) {
        std::fprintf(stderr, "refx: effects_barrier at thread exit: unknown failure\n");
      }
    }
  }
};

/// The calling thread's token state for the runtime with id `runtime`.
inline ThreadTokens& thread_tokens(std::uint64_t runtime) {
  struct Cache {
    std::unordered_map<std::uint64_t, ThreadTokens> by_runtime;
    std::uint64_t last_id = 0;
    ThreadTokens* last = nullptr;
  };
  thread_local Cache cache;
  if (cache.last != nullptr && cache.last_id == runtime) return *cache.last;
  cache.last = &cache.by_runtime[runtime];  // node-based: the address is stable
  cache.last_id = runtime;
  return *cache.last;
}

}  // namespace detail
}  // namespace refx
