#pragma once
// Communication primitives: semaphores and copies. Their implementations
// call the ExecEnv, which the reference interpreter (one device) and the
// threaded runtime (a mesh) implement.
//
//   semaphore_signal  views [sem]              inputs [inc(, device(, core))]
//   semaphore_wait    views [sem]              inputs [value]
//   semaphore_read    views [sem]              -> i32
//   barrier_semaphore attrs [collective id]    -> Ref (barrier semaphore)
//   dma_start         views [src, dst, recv_sem(, send_sem)]  inputs [device (remote)][, predicate]
//                     attrs [descriptor, reduce (CopyReduce), remote(, predicated)]
//                     predicated (local copies only): where the bool predicate is false
//                     nothing moves and the receive semaphore is signalled with the
//                     copy's byte count at once, so its wait stays unconditional
//                     (emit_pipeline's run-time fetch rule, pipeline/schedule.hpp)
//                     forwarded (attr 5, set by passes::forward_copies): nothing moves,
//                     the receive semaphore rises at once as above
//   dma_wait          views [src, dst, sem]    attrs [descriptor, which (0 recv, 1 send)]

#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>

namespace refx::detail {

/// A semaphore view must designate one semaphore (index arrays first).
inline void expect_semaphore(AbstractContext& c, std::size_t view, bool allow_dma, const char* what) {
  const ValueType& r = c.view_ref(view);
  (void)what;  // the primitive's name already prefixes the message
  if (!r.is_semaphore()) c.fail("needs a semaphore, not a {} Ref", r.dtype);
  if (!allow_dma && r.semaphore == SemaphoreKind::dma)
    c.fail("takes a REGULAR or BARRIER semaphore; a DMA semaphore advances with copies (wait on the copy)");
  if (c.view_shape(view).rank() != 0) c.fail("needs a single semaphore; index the semaphore array with .at(i)");
}
inline std::int64_t sem_index(ExecContext& ctx, const Op& op, std::size_t view) { return ctx.view_offset(op, view); }
inline ValueId sem_ref(ExecContext& ctx, const Op& op, std::size_t view) {
  return ctx.graph().view(ctx.graph().views(op)[view]).ref;
}
inline void expect_i32_scalar(AbstractContext& c, std::size_t i, const char* what) {
  const ValueType& t = c.input(i);
  if (t.is_ref() || t.shape.rank() != 0 || !is_integral(t.dtype)) c.fail("{} must be an integer scalar", what);
}

inline void signal_abstract(AbstractContext& c) {
  expect_semaphore(c, 0, false, "semaphore_signal");
  expect_i32_scalar(c, 0, "the increment");
  if (c.num_inputs() > 1) expect_i32_scalar(c, 1, "the device id");
  if (c.num_inputs() > 2) expect_i32_scalar(c, 2, "the core index");
  c.add_effect(effect_semaphore, c.view(0));
}
inline ExecStatus signal_impl(ExecContext& ctx, const Op& op) {
  const auto ins = ctx.graph().inputs(op);
  if (ins.size() > 2) {  // [inc, device, core]: a core of this device (core_barrier); the device input is ignored
    const auto core = static_cast<std::int32_t>(ctx.scalar(ins[2]));
    if (core < 0 || core >= ctx.env().num_cores())
      runtime_error(op.loc, "semaphore signal to core {} but the device has {} cores", core, ctx.env().num_cores());
    ctx.env().core_semaphore_signal(ctx, op, sem_ref(ctx, op, 0), sem_index(ctx, op, 0), ctx.scalar(ins[0]), core);
    return ExecStatus::done;
  }
  const auto device = ins.size() > 1 ? static_cast<std::int32_t>(ctx.scalar(ins[1])) : ctx.env().device_id();
  if (device < 0 || device >= ctx.env().num_devices())
    runtime_error(op.loc, "semaphore_signal to device {} but the mesh has {} devices", device, ctx.env().num_devices());
  ctx.env().semaphore_signal(ctx, op, sem_ref(ctx, op, 0), sem_index(ctx, op, 0), ctx.scalar(ins[0]), device);
  return ExecStatus::done;
}

inline void wait_abstract(AbstractContext& c) {
  expect_semaphore(c, 0, false, "semaphore_wait");
  expect_i32_scalar(c, 0, "the value");
  c.add_effect(effect_semaphore, c.view(0));
}
inline ExecStatus wait_impl(ExecContext& ctx, const Op& op) {
  const bool ok = ctx.env().semaphore_wait(ctx, op, sem_ref(ctx, op, 0), sem_index(ctx, op, 0),
                                           ctx.scalar(ctx.graph().inputs(op)[0]));
  return ok ? ExecStatus::done : ExecStatus::blocked;
}

inline void read_abstract(AbstractContext& c) {
  expect_semaphore(c, 0, true, "semaphore_read");
  c.add_output(ValueType{DType::i32, ValueKind::array, MemorySpace::smem, SemaphoreKind::none, {}});
  c.add_effect(effect_semaphore, c.view(0));
}
inline ExecStatus read_impl(ExecContext& ctx, const Op& op) {
  *ctx.out(op, 0).data<std::int32_t>() =
      static_cast<std::int32_t>(ctx.env().semaphore_read(ctx, sem_ref(ctx, op, 0), sem_index(ctx, op, 0)));
  return ExecStatus::done;
}

inline void barrier_abstract(AbstractContext& c) {
  c.add_output(ValueType{DType::i64, ValueKind::ref, MemorySpace::semaphore, SemaphoreKind::barrier, {}});
}
inline ExecStatus barrier_impl(ExecContext& ctx, const Op& op) {
  ctx.set_ref(ctx.graph().outputs(op)[0],
              &ctx.env().barrier_semaphore(prim::barrier_semaphore_attrs(ctx.graph(), op).collective_id));
  return ExecStatus::done;
}

inline void copy_abstract(AbstractContext& c) {
  if (c.num_attrs() < 3 || c.num_attrs() > 6)  // (+ predicated, priority, forwarded)
    c.fail("takes three attributes (descriptor, reduce, remote), got {}", c.num_attrs());
  if (c.attr(1) < 0 || c.attr(1) > 2) c.fail("reduce attribute {} is not none (0), sum (1) or max (2)", c.attr(1));
  if (c.num_views() < 3 || c.num_views() > 4)
    c.fail("takes a source, a destination, a receive semaphore and (remote) a send semaphore, got {} Refs",
           c.num_views());
  const bool remote = c.attr(2) != 0, predicated = c.num_attrs() >= 4 && c.attr(3) != 0;
  if (remote && predicated) c.fail("a predicated copy is a local copy");
  // Mosaic's enqueue_dma takes priority 0 or 1, and 0 only for a remote copy.
  if (const std::int64_t p = c.num_attrs() >= 5 ? c.attr(4) : 0; p != 0 && p != 1)
    c.fail("priority {} is neither 0 (the default, highest) nor 1 (lower); the DMA engine has these two", p);
  else if (p != 0 && remote)
    c.fail("priority {}: a remote copy runs at priority 0 (Mosaic refuses another for remote DMAs)", p);
  const std::size_t inputs = (remote ? 1 : 0) + (predicated ? 1 : 0);
  if (c.num_inputs() != inputs)
    c.fail("takes {} operands (the target device of a remote copy, the predicate of a predicated one), got {}", inputs,
           c.num_inputs());
  if (remote) expect_i32_scalar(c, 0, "the device id");
  if (predicated) {
    const ValueType& p = c.input(inputs - 1);
    if (p.is_ref() || p.shape.rank() != 0 || p.dtype != DType::pred) c.fail("the predicate must be a bool scalar");
  }
  const ValueType &src = c.view_ref(0), &dst = c.view_ref(1);
  if (src.is_semaphore() || dst.is_semaphore()) c.fail("cannot copy semaphores");
  for (std::size_t v = 0; v < 2; ++v)
    if (c.view_dtype(v) != c.view_ref(v).dtype)
      c.fail(
          "cannot copy through a bitcast Ref view (the {} is a {} view of a {} Ref); copy the Refs themselves "
          "and bitcast the destination",
          v == 0 ? "source" : "destination", c.view_dtype(v), c.view_ref(v).dtype);
  if (src.dtype != dst.dtype) c.fail("source and destination element types differ ({} and {})", src.dtype, dst.dtype);
  if (c.attr(1) != 0 && src.dtype == DType::pred) c.fail("a combining copy needs numeric elements, not bool");
  if (!(c.view_shape(0) == c.view_shape(1)))
    c.fail("source region {} and destination region {} have different shapes", c.view_shape(0), c.view_shape(1));
  for (std::size_t v = 2; v < c.num_views(); ++v) {
    expect_semaphore(c, v, true, "a copy");
    const SemaphoreKind k = c.view_ref(v).semaphore;
    if (k == SemaphoreKind::barrier)
      c.fail("a copy completes on a DMA or REGULAR semaphore, not on the BARRIER semaphore");
    // Mosaic refuses a REGULAR completion semaphore for a TensorCore copy to or from Smem.
    if (k == SemaphoreKind::regular && (src.space == MemorySpace::smem || dst.space == MemorySpace::smem))
      c.fail("a copy to or from Smem completes on a DMA semaphore, not a REGULAR one");
  }
  c.add_effect(effect_read, c.view(0));
  c.add_effect(c.attr(1) ? effect_accum : effect_write, c.view(1));
  for (std::size_t v = 2; v < c.num_views(); ++v) c.add_effect(effect_semaphore, c.view(v));
}
/// What semaphore `sem` rises by when a copy of `src` lands (CopyRequest::recv_inc).
inline std::int64_t completion_increment(const Graph& g, ValueId sem, const ResolvedView& src) {
  return g.type(sem).semaphore == SemaphoreKind::regular ? 1 : static_cast<std::int64_t>(src.bytes());
}
inline ExecStatus copy_start_impl(ExecContext& ctx, const Op& op) {
  CopyRequest r;
  r.src = ctx.view(op, 0);
  r.dst = ctx.view(op, 1);
  r.dst_ref = ctx.graph().view(ctx.graph().views(op)[1]).ref;
  r.recv_sem = sem_ref(ctx, op, 2);
  r.recv_index = sem_index(ctx, op, 2);
  r.recv_inc = completion_increment(ctx.graph(), r.recv_sem, r.src);
  if (op.view_count > 3) {
    r.send_sem = sem_ref(ctx, op, 3);
    r.send_index = sem_index(ctx, op, 3);
    r.send_inc = completion_increment(ctx.graph(), r.send_sem, r.src);
  }
  const prim::DmaStartAttrs a = prim::dma_start_attrs(ctx.graph(), op);
  r.target = a.remote ? static_cast<std::int32_t>(ctx.scalar(ctx.graph().inputs(op)[0])) : ctx.env().device_id();
  r.reduce = a.reduce;
  r.loc = op.loc;
  if (a.forwarded) {
    ctx.env().copy_forwarded(ctx, op, r);
    return ExecStatus::done;
  }
  if (a.predicated && ctx.scalar(ctx.graph().inputs(op)[op.in_count - 1]) == 0) {
    // Not copied: the receive semaphore rises as if the copy had landed.
    ctx.env().semaphore_signal(ctx, op, r.recv_sem, r.recv_index, r.recv_inc, ctx.env().device_id());
    return ExecStatus::done;
  }
  if (r.target < 0 || r.target >= ctx.env().num_devices())
    runtime_error(op.loc, "copy to device {} but the mesh has {} devices", r.target, ctx.env().num_devices());
  ctx.env().copy_start(ctx, op, r);
  return ExecStatus::done;
}

inline void copy_wait_abstract(AbstractContext& c) {
  if (c.num_attrs() != 2) c.fail("takes two attributes (descriptor, side), got {}", c.num_attrs());
  if (c.attr(1) != 0 && c.attr(1) != 1) c.fail("side attribute {} is not recv (0) or send (1)", c.attr(1));
  if (c.num_views() != 3) c.fail("takes a source, a destination and a semaphore, got {} Refs", c.num_views());
  expect_semaphore(c, 2, true, "a copy wait");
  if (c.view_ref(2).semaphore != SemaphoreKind::dma)
    c.fail("waits on a DMA semaphore; a copy that completes on a REGULAR semaphore is waited with semaphore_wait");
  const auto side = static_cast<prim::WaitSide>(c.attr(1));
  // Completion makes the destination readable (recv) / the source reusable (send).
  if (side == prim::WaitSide::recv) c.add_effect(effect_write, c.view(1));
  else c.add_effect(effect_read, c.view(0));
  c.add_effect(effect_semaphore, c.view(2));
}
inline ExecStatus copy_wait_impl(ExecContext& ctx, const Op& op) {
  const prim::WaitSide side = prim::dma_wait_attrs(ctx.graph(), op).side;
  const std::int64_t bytes =
      ctx.graph().view_elements(ctx.graph().views(op)[side == prim::WaitSide::recv ? 1 : 0]) *
      static_cast<std::int64_t>(size_of(ctx.graph().type(ctx.graph().view(ctx.graph().views(op)[0]).ref).dtype));
  const bool ok = ctx.env().semaphore_wait(ctx, op, sem_ref(ctx, op, 2), sem_index(ctx, op, 2), bytes);
  return ok ? ExecStatus::done : ExecStatus::blocked;
}

inline void copy_print(const Graph& g, const Op& op, std::string& s) {
  if (op.prim == &prim::dma_start) {
    const prim::DmaStartAttrs a = prim::dma_start_attrs(g, op);
    s += fmt::format("dma_start[desc={}{}{}{}{}{}]", a.descriptor,
                     a.reduce == CopyReduce::sum   ? " add"
                     : a.reduce == CopyReduce::max ? " max"
                                                   : "",
                     a.remote ? " remote" : "", a.predicated ? " if" : "",
                     a.priority != 0 ? fmt::format(" p{}", a.priority) : "", a.forwarded ? " forwarded" : "");
  } else {
    const prim::DmaWaitAttrs a = prim::dma_wait_attrs(g, op);
    s += fmt::format("dma_wait[desc={} {}]", a.descriptor, a.side == prim::WaitSide::recv ? "recv" : "send");
  }
}

}  // namespace refx::detail

namespace refx::prim {

#if REFX_DEFINITIONS
// Constant-initialised (no dynamic initialisation): usable from any static
// initializer, whatever the order of translation units.
namespace defs {
inline constexpr Primitive semaphore_signal =
    Primitive{"semaphore_signal", detail::signal_abstract, detail::signal_impl};
inline constexpr Primitive semaphore_wait = Primitive{"semaphore_wait", detail::wait_abstract, detail::wait_impl};
inline constexpr Primitive semaphore_read = Primitive{"semaphore_read", detail::read_abstract, detail::read_impl};
inline constexpr Primitive barrier_semaphore =
    Primitive{"barrier_semaphore", detail::barrier_abstract, detail::barrier_impl};
inline constexpr Primitive dma_start =
    Primitive{"dma_start", detail::copy_abstract, detail::copy_start_impl, detail::copy_print};
inline constexpr Primitive dma_wait =
    Primitive{"dma_wait", detail::copy_wait_abstract, detail::copy_wait_impl, detail::copy_print};
}  // namespace defs
REFX_DECL constinit const Primitive& semaphore_signal = defs::semaphore_signal;
REFX_DECL constinit const Primitive& semaphore_wait = defs::semaphore_wait;
REFX_DECL constinit const Primitive& semaphore_read = defs::semaphore_read;
REFX_DECL constinit const Primitive& barrier_semaphore = defs::barrier_semaphore;
REFX_DECL constinit const Primitive& dma_start = defs::dma_start;
REFX_DECL constinit const Primitive& dma_wait = defs::dma_wait;
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim

// The list of built-in primitives is defined once every one of them is.
#define REFX_BUILTINS_COMM_DEFINED
#include <refx/ir/primitives/detail/builtin_list.hpp>
