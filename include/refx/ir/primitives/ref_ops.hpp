#pragma once
// State primitives: read a region of a Ref (load), write it (store), add
// into it (accum). Each carries one Read / Write / Accum effect on its view.
// touch (Pallas' pltpu.touch) claims a read and a write of its view and does
// nothing: later ops stay after it, and the race detector sees a write.

#include <cstring>

#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>

namespace refx::prim {
/// Attribute 0 of a load that reads its Ref in place (set by
/// passes::read_in_place only); a load without attributes copies.
inline constexpr std::int64_t load_in_place = 1;
/// Whether `op` is a load marked to read its Ref's memory in place.
inline bool load_reads_in_place(const Graph& g, const Op& op) {
  const auto a = g.attrs(op);
  return op.prim == &load && !a.empty() && a[0] == load_in_place;
}
}  // namespace refx::prim

namespace refx::detail {

inline void expect_compute_ref(AbstractContext& c, const char* what) {
  const ValueType& r = c.view_ref(0);
  if (r.is_semaphore()) c.fail("cannot {} a semaphore; use semaphore_read / semaphore_signal", what);
  if (r.space == MemorySpace::hbm) c.fail("compute cannot {} an Hbm Ref; copy it to Vmem first", what);
}

inline void load_abstract(AbstractContext& c) {
  expect_compute_ref(c, "read");
  c.add_output(ValueType{c.view_dtype(0), ValueKind::array, MemorySpace::vmem, SemaphoreKind::none, c.view_shape(0)});
  c.add_effect(effect_read, c.view(0));
}

// A bitcast view (Ref::bitcast) presents its footprint's bytes, read densely
// in row-major order, as elements of another type: ctx.view() resolves its
// footprint in the Ref's elements, and these move the bytes through a dense
// buffer of the Ref's type.
inline bool moves_bytes(const ExecContext& ctx, const Op& op) {
  const ViewId v = ctx.graph().views(op)[0];
  return ctx.graph().view_dtype(v) != ctx.graph().type(ctx.graph().view(v).ref).dtype;
}
inline Buffer read_footprint(const ResolvedView& r) {
  Buffer raw(r.buffer->dtype(), r.shape);
  read_view(r, raw);
  return raw;
}
inline void write_footprint(const ResolvedView& r, const std::byte* bytes) {
  Buffer raw(r.buffer->dtype(), r.shape);
  std::memcpy(raw.data(), bytes, raw.bytes());
  write_view(r, raw);
}

// A load the read_in_place pass marked (prim::load_reads_in_place: nothing
// changes its region before the value's last use) whose region is one dense
// run of the Ref's elements yields a Buffer that borrows the Ref's memory;
// any other load copies the region into the value's own buffer.
inline ExecStatus load_impl(ExecContext& ctx, const Op& op) {
  if (!moves_bytes(ctx, op)) {
    const ResolvedView r = ctx.view(op, 0);
    if (prim::load_reads_in_place(ctx.graph(), op) && r.elements() > 0 && is_contiguous(r)) {
      const DType t = r.buffer->dtype();
      const Shape& shape = ctx.graph().type(ctx.graph().outputs(op)[0]).shape;  // a reshaped view's extents
      ctx.set_out(op, 0, Buffer::borrow(t, shape, r.buffer->data() + r.offset * static_cast<std::int64_t>(size_of(t))));
      return ExecStatus::done;
    }
    read_view(r, ctx.out(op, 0));
  } else {
    Buffer& out = ctx.out(op, 0);
    std::memcpy(out.data(), read_footprint(ctx.view(op, 0)).data(), out.bytes());
  }
  return ExecStatus::done;
}

template <std::uint8_t Bits>
void store_abstract(AbstractContext& c) {
  expect_compute_ref(c, "write");
  const ValueType& v = c.input(0);
  if (v.is_ref()) c.fail("expected a Value to store, got a Ref; read it with load() first");
  if (v.dtype != c.view_dtype(0))
    c.fail("cannot store a {} value into a {} Ref (no implicit conversion; use cast)", v.dtype, c.view_dtype(0));
  if (!(v.shape == c.view_shape(0)))
    c.fail("shape mismatch: storing a {} value into a {} region", v.shape, c.view_shape(0));
  c.add_effect(Bits, c.view(0));
}
inline ExecStatus store_impl(ExecContext& ctx, const Op& op) {
  if (!moves_bytes(ctx, op)) write_view(ctx.view(op, 0), ctx.in(op, 0));
  else write_footprint(ctx.view(op, 0), ctx.in(op, 0).data());
  return ExecStatus::done;
}
inline ExecStatus accum_impl(ExecContext& ctx, const Op& op) {
  if (!moves_bytes(ctx, op)) {
    accum_view(ctx.view(op, 0), ctx.in(op, 0));
    return ExecStatus::done;
  }
  // Adds in the view's element type: read, add densely, write back.
  const ResolvedView r = ctx.view(op, 0);
  const Buffer& in = ctx.in(op, 0);
  Buffer cur(in.dtype(), in.shape());
  std::memcpy(cur.data(), read_footprint(r).data(), cur.bytes());
  ResolvedView dense{&cur, 0, cur.shape(), {}};
  std::int64_t run = 1;
  for (std::size_t d = cur.shape().rank(); d-- > 0;) {
    dense.strides[d] = run;
    run *= cur.shape()[d];
  }
  accum_view(dense, in);
  write_footprint(r, cur.data());
  return ExecStatus::done;
}

inline void touch_abstract(AbstractContext& c) {
  if (c.view_ref(0).is_semaphore()) c.fail("touch takes a Ref of memory, not a semaphore");
  c.add_effect(effect_read | effect_write, c.view(0));
}
inline ExecStatus touch_impl(ExecContext&, const Op&) { return ExecStatus::done; }

}  // namespace refx::detail

namespace refx::prim {

#if REFX_DEFINITIONS
// Constant-initialised (no dynamic initialisation): usable from any static
// initializer, whatever the order of translation units.
namespace defs {
inline constexpr Primitive load = Primitive{"load", detail::load_abstract, detail::load_impl};
inline constexpr Primitive store = Primitive{"store", detail::store_abstract<effect_write>, detail::store_impl};
inline constexpr Primitive accum = Primitive{"accum", detail::store_abstract<effect_accum>, detail::accum_impl};
inline constexpr Primitive touch = Primitive{"touch", detail::touch_abstract, detail::touch_impl};
}  // namespace defs
REFX_DECL constinit const Primitive& load = defs::load;
REFX_DECL constinit const Primitive& store = defs::store;
REFX_DECL constinit const Primitive& accum = defs::accum;
REFX_DECL constinit const Primitive& touch = defs::touch;
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim

// The list of built-in primitives is defined once every one of them is.
#define REFX_BUILTINS_REF_OPS_DEFINED
#include <refx/ir/primitives/detail/builtin_list.hpp>
