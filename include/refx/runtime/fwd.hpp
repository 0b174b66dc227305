#pragma once
// The runtime as the API layer names it (kernel.hpp, array.hpp): declared
// here, defined in runtime.hpp, which separate compilation keeps out of
// user code (config.hpp).

#include <refx/config.hpp>

namespace refx {

class Event;
class Runtime;
struct Program;

namespace detail {
/// Runtime::global(), for default arguments where Runtime is incomplete.
REFX_DECL Runtime& global_runtime();
}  // namespace detail

/// Waits for the effects of every program the calling thread dispatched to
/// `rt` (see Runtime::effects_barrier); rethrows the first failure once. Also
/// runs, without throwing, when the thread exits (at exit for the main thread).
REFX_DECL void effects_barrier(Runtime& rt = detail::global_runtime());

}  // namespace refx

#if REFX_HEADER_ONLY
#include <refx/runtime/runtime.hpp>  // the definitions
#endif
