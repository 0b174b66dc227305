#pragma once
// Structured control flow. The evaluator runs their bodies (ControlKind);
// the tracer computes their output types from the traced body.
//   scope: inputs = initial values of the first params; body params = Refs
//          (run_state / run_scoped); outputs = body results.
//   fori_loop: inputs = lo, hi, carries; body params = i, carries.
//   when: input = predicate; body has no params or results.
//   allocate: no inputs; outputs = Refs (buffers or semaphores) that live for
//          the whole kernel, allocated statically like scope storage.

#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/builtins.hpp>

namespace refx::prim {

namespace detail {
inline ExecStatus allocate_impl(ExecContext& ctx, const Op& op) {
  for (ValueId v : ctx.graph().outputs(op)) ctx.set_ref(v, ctx.storage(v));
  return ExecStatus::done;
}
}  // namespace detail

#if REFX_DEFINITIONS
REFX_DECL const Primitive& scope =
    define_primitive(Primitive{"scope", nullptr, nullptr, nullptr, nullptr, ControlKind::scope, nullptr});
REFX_DECL const Primitive& fori_loop =
    define_primitive(Primitive{"fori_loop", nullptr, nullptr, nullptr, nullptr, ControlKind::loop, nullptr});
REFX_DECL const Primitive& when =
    define_primitive(Primitive{"when", nullptr, nullptr, nullptr, nullptr, ControlKind::cond, nullptr});

REFX_DECL const Primitive& allocate = define_primitive(
    Primitive{"allocate", nullptr, detail::allocate_impl, nullptr, nullptr, ControlKind::none, nullptr, true});
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim
