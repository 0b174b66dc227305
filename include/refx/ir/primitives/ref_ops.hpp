#pragma once
// State primitives: read a region of a Ref (load), write it (store), add
// into it (accum). Each carries one Read / Write / Accum effect on its view.

#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/builtins.hpp>

namespace refx::prim {
namespace detail {

inline void expect_compute_ref(AbstractContext& c, const char* what) {
  const ValueType& r = c.view_ref(0);
  if (r.is_semaphore()) c.fail("cannot {} a semaphore; use semaphore_read / semaphore_signal", what);
  if (r.space == MemorySpace::hbm) c.fail("compute cannot {} an Hbm Ref; copy it to Vmem first", what);
}

inline void load_abstract(AbstractContext& c) {
  expect_compute_ref(c, "read");
  c.add_output(ValueType{c.view_ref(0).dtype, ValueKind::array, MemorySpace::vmem, SemaphoreKind::none, c.view_shape(0)});
  c.add_effect(effect_read, c.view(0));
}
inline ExecStatus load_impl(ExecContext& ctx, const Op& op) {
  read_view(ctx.view(op, 0), ctx.out(op, 0));
  return ExecStatus::done;
}

template <std::uint8_t Bits>
void store_abstract(AbstractContext& c) {
  expect_compute_ref(c, "write");
  const ValueType& v = c.input(0);
  if (v.is_ref()) c.fail("expected a Value to store, got a Ref; read it with load() first");
  if (v.dtype != c.view_ref(0).dtype)
    c.fail("cannot store a {} value into a {} Ref (no implicit conversion; use cast)", v.dtype, c.view_ref(0).dtype);
  if (!(v.shape == c.view_shape(0)))
    c.fail("shape mismatch: storing a {} value into a {} region", v.shape, c.view_shape(0));
  c.add_effect(Bits, c.view(0));
}
inline ExecStatus store_impl(ExecContext& ctx, const Op& op) {
  write_view(ctx.view(op, 0), ctx.in(op, 0));
  return ExecStatus::done;
}
inline ExecStatus accum_impl(ExecContext& ctx, const Op& op) {
  accum_view(ctx.view(op, 0), ctx.in(op, 0));
  return ExecStatus::done;
}

}  // namespace detail

#if REFX_DEFINITIONS
REFX_DECL const Primitive& load = define_primitive(Primitive{"load", detail::load_abstract, detail::load_impl});
REFX_DECL const Primitive& store = define_primitive(Primitive{"store", detail::store_abstract<effect_write>, detail::store_impl});
REFX_DECL const Primitive& accum = define_primitive(Primitive{"accum", detail::store_abstract<effect_accum>, detail::accum_impl});
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim
