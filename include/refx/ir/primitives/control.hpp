#pragma once
// Structured control flow. The evaluator runs their bodies (ControlKind);
// the tracer computes their output types from the traced body.
//   scope: inputs = initial values of the first params; body params = Refs
//          (run_state / run_scoped); outputs = body results.
//   fori_loop: inputs = lo, hi, carries; body params = i, carries.
//   when: input = predicate; body has no params or results.

#include <refx/ir/primitive.hpp>

namespace refx::prim {

inline const Primitive& scope =
    define_primitive(Primitive{"scope", nullptr, nullptr, nullptr, nullptr, ControlKind::scope, nullptr});
inline const Primitive& fori_loop =
    define_primitive(Primitive{"fori_loop", nullptr, nullptr, nullptr, nullptr, ControlKind::loop, nullptr});
inline const Primitive& when =
    define_primitive(Primitive{"when", nullptr, nullptr, nullptr, nullptr, ControlKind::cond, nullptr});

}  // namespace refx::prim
