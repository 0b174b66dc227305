#pragma once
// What a compiled program's effects are (EffectInfo, Executable::effects())
// and what dispatch needs of them (LaunchEffects). See docs/effects.md.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <refx/config.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/host_effects.hpp>
#include <refx/ir/primitives/builtins.hpp>

namespace refx {

class Event;

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
REFX_DECL EffectInfo effect_info(const Graph& g);

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

#if REFX_DEFINITIONS
REFX_DECL EffectInfo effect_info(const Graph& g) {
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
               : communicates           ? SideEffectLevel::dataflow
                                        : SideEffectLevel::pure;
  return info;
}
#endif  // REFX_DEFINITIONS

}  // namespace refx
