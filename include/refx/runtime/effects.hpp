#pragma once
// Effects at dispatch: what a program's effects are (EffectInfo), where its
// prints go (print sinks), and the calling thread's token state (runtime
// tokens per ordered effect kind, output tokens per device). The Runtime
// (runtime.hpp) updates tokens at dispatch and exposes them; Launch
// (launch.hpp) performs the effects. See docs/effects.md.

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <refx/ir/graph.hpp>
#include <refx/ir/primitives/comm.hpp>
#include <refx/ir/primitives/effects.hpp>
#include <refx/runtime/event.hpp>

namespace refx {

/// How removable a program is. refx runs every call (nothing is elided); the
/// level says what a program does besides writing its outputs.
enum class SideEffectLevel : std::uint8_t {
  pure,       ///< reads its inputs and writes its outputs, nothing else
  dataflow,   ///< also communicates (semaphores, remote copies, barrier semaphores)
  effectful,  ///< also has host effects (debug_print, io_callback)
};
/// How a call is dispatched: always asynchronously (the call returns at once,
/// effects and results follow), whatever the program's effects.
enum class DispatchMode : std::uint8_t { async };

inline constexpr std::string_view to_string(SideEffectLevel l) {
  return l == SideEffectLevel::pure ? "pure" : l == SideEffectLevel::dataflow ? "dataflow" : "effectful";
}
inline constexpr std::string_view to_string(DispatchMode) { return "async"; }

/// The effects of a compiled program (Executable::effects()).
struct EffectInfo {
  /// Ordered effect kinds present, in token order; each takes and replaces
  /// the calling thread's runtime token of that kind.
  std::vector<OrderedEffect> ordered;
  /// Unordered host effects (debug_print / io_callback without `ordered`).
  bool unordered = false;
  /// io_callback ops (ordered or not): calls into user code on the host.
  bool host_callbacks = false;
  int debug_prints = 0;  ///< debug_print ops in the program (static count)
  int io_callbacks = 0;  ///< io_callback ops in the program (static count)
  SideEffectLevel level = SideEffectLevel::pure;
  DispatchMode dispatch = DispatchMode::async;

  bool has_ordered(OrderedEffect k) const { return std::find(ordered.begin(), ordered.end(), k) != ordered.end(); }
  /// Any host effect: the program updates the output tokens of its devices.
  bool has_host_effects() const { return unordered || !ordered.empty(); }
  std::uint8_t ordered_mask() const {
    std::uint8_t m = 0;
    for (OrderedEffect k : ordered) m |= static_cast<std::uint8_t>(1u << (static_cast<unsigned>(k) - 1));
    return m;
  }
  std::string describe() const {
    std::vector<std::string_view> kinds;
    for (OrderedEffect k : ordered) kinds.push_back(to_string(k));
    return fmt::format("{} (ordered: [{}], unordered: {}, host callbacks: {}, dispatch: {})", to_string(level),
                       fmt::join(kinds, ", "), unordered ? "yes" : "no", host_callbacks ? "yes" : "no",
                       to_string(dispatch));
  }
};

/// The effects of a graph, from its ops' effect sets (nested bodies included).
inline EffectInfo effect_info(const Graph& g) {
  EffectInfo info;
  bool communicates = false;
  std::uint8_t mask = 0;
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    if (op.prim == &prim::debug_print) ++info.debug_prints;
    if (op.prim == &prim::io_callback) {
      ++info.io_callbacks;
      info.host_callbacks = true;
    }
    if (op.prim == &prim::barrier_semaphore) communicates = true;
    for (const Effect& e : g.effects(op)) {
      if (e.bits & effect_semaphore) communicates = true;
      if (e.bits & effect_io) info.unordered = true;
      if ((e.bits & effect_ordered) && e.token >= 1 && e.token <= num_ordered_effects)
        mask |= static_cast<std::uint8_t>(1u << (e.token - 1));
    }
  }
  for (OrderedEffect k : ordered_effects)
    if (mask & (1u << (static_cast<unsigned>(k) - 1))) info.ordered.push_back(k);
  info.level = (info.unordered || mask) ? SideEffectLevel::effectful
               : communicates          ? SideEffectLevel::dataflow
                                       : SideEffectLevel::pure;
  return info;
}

/// What the runtime needs to know about a call's effects at dispatch.
struct LaunchEffects {
  std::uint8_t ordered_mask = 0;  ///< bit k-1: ordered effects of kind k
  bool host_effects = false;      ///< any debug_print / io_callback
  bool has_outputs = true;        ///< the call writes Arrays (false: only effects observe it)
  bool known = false;             ///< false: the runtime computes it from the graph

  static LaunchEffects of(const EffectInfo& info, bool has_outputs) {
    return LaunchEffects{info.ordered_mask(), info.has_host_effects(), has_outputs, true};
  }
  /// Needs an output token: host effects, or nothing else to wait on.
  bool output_token() const { return host_effects || !has_outputs; }
};

/// An argument Array that an earlier call (possibly on another Runtime) is
/// still producing or failed to produce: a launch waits for it before it
/// starts, and fails with the cause if it is an input whose producer failed.
struct InputDependency {
  std::size_t index = 0;  ///< kernel parameter
  bool input = true;      ///< read (an input) or overwritten (call_in_place)
  std::shared_ptr<Event> event;
};

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
  std::vector<RuntimeToken> output;                      ///< per device: the latest launch with host effects
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

/// True while this thread performs a host effect (a callback must not wait
/// for the launch that is calling it).
inline bool& in_host_effect() {
  thread_local bool flag = false;
  return flag;
}

}  // namespace detail
}  // namespace refx
