#pragma once
// The per-core state of a trace (trace/cores.hpp): a kernel compiled for a
// mesh whose devices have C cores (Mesh::with_cores) is traced once per core,
// each copy inside when(core == c), so that core_index() and a pipeline's
// share of the grid are known while tracing. trace() calls trace_per_core;
// kernels read the state through core_index(), num_cores(), core_map and
// core_barrier.

#include <cstdint>

#include <refx/config.hpp>
#include <refx/core/source_location.hpp>
#include <refx/ir/graph.hpp>

namespace refx::detail {

struct CoreTrace {
  std::int32_t core = 0, cores = 1;
  bool in_core_map = false;
  ViewId barrier = no_id;  // the REGULAR semaphore core_barrier counts on (cores > 1)
};
/// This thread's: {0, 1} outside a per-core trace.
REFX_DECL CoreTrace& core_trace() noexcept;

/// Traces `each(arg)` once per core, each inside when(core_index == c) and
/// with core_trace() set to that core, within a scope holding the barrier
/// semaphore (the same value in every copy, so cores can signal each other's).
REFX_DECL void trace_per_core(std::int32_t cores, void (*each)(void*), void* arg, refx::source_location loc);

}  // namespace refx::detail
