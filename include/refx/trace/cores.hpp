#pragma once
// Cores per device (Pallas' TensorCore mesh and core_map): a kernel compiled
// for Mesh::with_cores(C) runs on every core of every device, each core a
// copy of the kernel traced for it and run as a lane of the runtime. The
// cores of a device share its Hbm (the kernel's parameters); scratch from
// run_scoped (Vmem, Smem, semaphores) is per core.
//
//   core_index(), num_cores()   which core this copy is traced for (an
//                               integer: the copies are traced separately)
//   core_map(body)              body(core) on each core: the region where
//                               cores synchronise with core_barrier()
//   core_barrier()              no core passes until every core of its device
//                               reached it (inside core_map only)
//
// Pipelines split their grid across the cores by dimension semantics
// (Grid::dimension_semantics, pipeline/cores.hpp).

#include <cstdint>
#include <type_traits>

#include <refx/core/source_location.hpp>
#include <refx/trace/detail/core_trace.hpp>

namespace refx {

/// The core this copy of the kernel runs on (0 on a device with one core).
inline std::int32_t core_index() noexcept { return detail::core_trace().core; }
/// The cores of each device of the mesh the kernel is traced for.
inline std::int32_t num_cores() noexcept { return detail::core_trace().cores; }

namespace detail {
/// Marks the body of a core_map (core_barrier is allowed there).
class CoreMapScope {
 public:
  explicit CoreMapScope(SourceLoc loc);
  ~CoreMapScope() { core_trace().in_core_map = false; }
  CoreMapScope(const CoreMapScope&) = delete;
  CoreMapScope& operator=(const CoreMapScope&) = delete;
};
REFX_DECL void enter_core_map(SourceLoc loc);
inline CoreMapScope::CoreMapScope(SourceLoc loc) { enter_core_map(loc); }
}  // namespace detail

/// Runs body(core) on every core of the device (Pallas' core_map): the
/// code every core reaches, where core_barrier() synchronises them.
template <class F>
void core_map(F&& body, refx::source_location loc = refx::source_location::current()) {
  constexpr bool ok = std::is_invocable_v<F&, std::int32_t>;
  static_assert(ok,
                "refx: core_map's body takes the core index: core_map([&](std::int32_t core) { ... }), run on every "
                "core of the device");
  if constexpr (ok) {
    const detail::CoreMapScope scope(loc);
    body(core_index());
  }
}

/// Waits until every core of this device has reached its matching
/// core_barrier(); what a core wrote before it is visible to the others
/// after it. Only inside core_map.
REFX_DECL void core_barrier(refx::source_location loc = refx::source_location::current());

}  // namespace refx

#if REFX_DEFINITIONS
#include <refx/trace/control_flow.hpp>
#include <refx/trace/scopes.hpp>
#include <refx/trace/semaphore.hpp>
#include <refx/trace/value.hpp>

namespace refx {
namespace detail {

REFX_DECL CoreTrace& core_trace() noexcept {
  thread_local CoreTrace state;
  return state;
}

REFX_DECL void trace_per_core(std::int32_t cores, void (*each)(void*), void* arg, refx::source_location loc) {
  run_scoped(
      [&](RegularSemaphore barrier) {
        auto& t = Tracer::current(loc);
        const std::int64_t attrs[] = {t.graph().add_string(std::string(core_axis_name))};
        const Scalar<std::int32_t> core = wrap<std::int32_t, extents<>>(t.bind1(prim::axis_index, {}, {}, attrs, loc));
        CoreTrace& state = core_trace();
        for (std::int32_t c = 0; c < cores; ++c) {
          state = CoreTrace{c, cores, false, barrier.view()};
          struct Reset {
            ~Reset() { core_trace() = CoreTrace{}; }
          } reset;
          when(
              core == c, [&] { each(arg); }, loc);
        }
      },
      loc);
}

REFX_DECL void enter_core_map(SourceLoc loc) {
  CoreTrace& state = core_trace();
  if (state.in_core_map)
    trace_error(loc, "core_map inside core_map: the body already runs on every core (call core_map once)");
  state.in_core_map = true;
}

}  // namespace detail

REFX_DECL void core_barrier(refx::source_location loc) {
  const detail::CoreTrace& state = detail::core_trace();
  if (!state.in_core_map)
    trace_error(loc,
                "core_barrier() outside core_map: only code every core runs in step may wait for the other cores; "
                "call it inside core_map([&](std::int32_t core) {{ ... }})");
  if (state.cores == 1) return;  // one core: nobody to wait for
  auto& t = detail::Tracer::current(loc);
  const ViewId views[] = {state.barrier};
  for (std::int32_t c = 0; c < state.cores; ++c) {
    if (c == state.core) continue;
    // [inc, device, core]: the device input is ignored for a core signal.
    const ValueId ins[] = {Scalar<std::int32_t>(1).id(), Scalar<std::int32_t>(0).id(), Scalar<std::int32_t>(c).id()};
    t.bind(prim::semaphore_signal, ins, views, {}, loc);
  }
  semaphore_wait(RegularSemaphore::from_view(state.barrier), state.cores - 1, loc);
}

}  // namespace refx
#endif  // REFX_DEFINITIONS
