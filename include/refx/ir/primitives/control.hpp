#pragma once
// Structured control flow. The evaluator runs their bodies (ControlKind);
// the tracer computes their output types from the traced body.
//   scope: inputs = initial values of the first params; body params = Refs
//          (run_state / run_scoped); outputs = body results.
//   fori_loop: inputs = lo, hi, carries; body params = i, carries.
//   when: input = predicate; body has no params or results.
//   cond: input = predicate; two bodies (taken where it is true / false),
//          neither with params, both with results of the same types; outputs
//          = the taken body's results (lax.cond).
//   allocate: no inputs; outputs = Refs (buffers or semaphores) that live for
//          the whole kernel, allocated statically like scope storage.

#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>

namespace refx::detail {
inline ExecStatus allocate_impl(ExecContext& ctx, const Op& op) {
  for (ValueId v : ctx.graph().outputs(op)) ctx.set_ref(v, ctx.storage(v));
  return ExecStatus::done;
}
}  // namespace refx::detail

namespace refx::prim {

#if REFX_DEFINITIONS
// Constant-initialised (no dynamic initialisation): usable from any static
// initializer, whatever the order of translation units.
namespace defs {
inline constexpr Primitive scope = Primitive{"scope", nullptr, nullptr, nullptr, nullptr, ControlKind::scope, nullptr};
inline constexpr Primitive fori_loop =
    Primitive{"fori_loop", nullptr, nullptr, nullptr, nullptr, ControlKind::loop, nullptr};
inline constexpr Primitive when = Primitive{"when", nullptr, nullptr, nullptr, nullptr, ControlKind::cond, nullptr};
inline constexpr Primitive cond = Primitive{"cond", nullptr, nullptr, nullptr, nullptr, ControlKind::cond, nullptr};
inline constexpr Primitive allocate =
    Primitive{"allocate", nullptr, detail::allocate_impl, nullptr, nullptr, ControlKind::none, nullptr, true};
}  // namespace defs
REFX_DECL constinit const Primitive& scope = defs::scope;
REFX_DECL constinit const Primitive& fori_loop = defs::fori_loop;
REFX_DECL constinit const Primitive& when = defs::when;
REFX_DECL constinit const Primitive& cond = defs::cond;
REFX_DECL constinit const Primitive& allocate = defs::allocate;
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim

// The list of built-in primitives is defined once every one of them is.
#define REFX_BUILTINS_CONTROL_DEFINED
#include <refx/ir/primitives/detail/builtin_list.hpp>
