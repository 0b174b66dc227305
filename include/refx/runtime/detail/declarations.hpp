#pragma once
// The runtime's declarations that the API layer needs (kernel.hpp, array.hpp)
// while Runtime is incomplete. runtime/fwd.hpp and runtime/runtime.hpp both
// include this; only fwd.hpp includes runtime.hpp (header-only builds).

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
