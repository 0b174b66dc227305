#pragma once
// The built-in primitives, declared, with named views of the attributes of
// those that have any (`dma_start_attrs(g, op).remote`: no pass reads an
// attribute by its position). The tracer refers to them by address;
// their definitions (abstract evaluation, implementation, printer) are in the
// headers beside this one, which header-only builds include through
// builtins.hpp and separate compilation (config.hpp) compiles once into the
// library. They are constant-initialised (constexpr objects, references bound
// with constinit): a kernel may be traced from any static initializer.

#include <cstddef>
#include <cstdint>
#include <string>

#include <refx/config.hpp>
#include <refx/ir/attrs.hpp>
#include <refx/ir/primitive.hpp>

namespace refx::prim {
// control.hpp
extern const Primitive& scope;
extern const Primitive& fori_loop;
extern const Primitive& when;
extern const Primitive& cond;
extern const Primitive& allocate;
// ref_ops.hpp
extern const Primitive& load;
extern const Primitive& store;
extern const Primitive& accum;
extern const Primitive& touch;
// elementwise.hpp
extern const Primitive& neg;
extern const Primitive& abs;
extern const Primitive& exp;
extern const Primitive& log;
extern const Primitive& sqrt;
extern const Primitive& logical_not;  // bitwise for integers
extern const Primitive& rsqrt;
extern const Primitive& tanh;
extern const Primitive& logistic;
extern const Primitive& log1p;
extern const Primitive& expm1;
extern const Primitive& erf;
extern const Primitive& sin;
extern const Primitive& cos;
extern const Primitive& add;
extern const Primitive& sub;
extern const Primitive& mul;
extern const Primitive& div;
extern const Primitive& rem;
extern const Primitive& min;
extern const Primitive& max;
extern const Primitive& logical_and;  // bitwise for integers
extern const Primitive& logical_or;   // bitwise for integers
extern const Primitive& logical_xor;  // bitwise for integers
extern const Primitive& pow;
extern const Primitive& shift_left;
extern const Primitive& shift_right_logical;
extern const Primitive& shift_right_arithmetic;
extern const Primitive& eq;
extern const Primitive& ne;
extern const Primitive& lt;
extern const Primitive& le;
extern const Primitive& gt;
extern const Primitive& ge;
extern const Primitive& select;
// structural.hpp
extern const Primitive& constant;
extern const Primitive& iota;
extern const Primitive& broadcast;
extern const Primitive& cast;
extern const Primitive& reduce_sum;
extern const Primitive& reduce_max;
extern const Primitive& reduce_min;
extern const Primitive& axis_index;
extern const Primitive& axis_size;
extern const Primitive& index_check;
/// constant's attributes by name: the element type and the value's bits
/// (a double's bits for floating types, the integer itself otherwise).
struct ConstantAttrs {
  DType dtype;
  std::int64_t bits;
};
inline ConstantAttrs constant_attrs(const Graph& g, const Op& op) {
  const auto a = g.attrs(op);
  return {static_cast<DType>(a[0]), a[1]};
}
/// axis_index's and axis_size's attribute by name: the mesh axis.
struct AxisAttrs {
  const std::string& axis;
};
inline AxisAttrs axis_attrs(const Graph& g, const Op& op) { return {g.string(g.attrs(op)[0])}; }
/// index_check's attributes by name: a window of `size` elements, `stride`
/// apart, along dimension `dim` of a parent view of `parent_size` elements.
struct IndexCheckAttrs {
  std::size_t dim;
  std::int64_t size, stride, parent_size;
};
inline IndexCheckAttrs index_check_attrs(const Graph& g, const Op& op) {
  const auto a = g.attrs(op);
  return {static_cast<std::size_t>(a[0]), a[1], a[2], a[3]};
}

// dot.hpp
extern const Primitive& dot;
// comm.hpp
extern const Primitive& semaphore_signal;
extern const Primitive& semaphore_wait;
extern const Primitive& semaphore_read;
extern const Primitive& barrier_semaphore;
extern const Primitive& dma_start;
extern const Primitive& dma_wait;
/// dma_start's attributes by name: the copy descriptor (an index into
/// Graph::descriptors()), how the destination combines, and whether the
/// destination is on another device; `predicated`: the copy runs only where
/// its last operand (a bool scalar) is true (comm.hpp); `priority`: the
/// DMA engine's queue, 0 (the default, highest) or 1 (Pallas' start(priority=));
/// `forwarded` (set by passes::forward_copies only): the ops beside the copy
/// use its other end, and it moves nothing (passes/forward_copies.hpp).
struct DmaStartAttrs {
  std::int64_t descriptor;
  CopyReduce reduce;
  bool remote;
  bool predicated = false;
  std::int32_t priority = 0;
  bool forwarded = false;
};
inline DmaStartAttrs dma_start_attrs(const Graph& g, const Op& op) {
  const auto a = g.attrs(op);
  return {a[0],
          static_cast<CopyReduce>(a[1]),
          a[2] != 0,
          a.size() > 3 && a[3] != 0,
          a.size() > 4 ? static_cast<std::int32_t>(a[4]) : 0,
          a.size() > 5 && a[5] != 0};
}
/// dma_wait's attributes by name: the copy descriptor and which semaphore.
struct DmaWaitAttrs {
  std::int64_t descriptor;
  WaitSide side;
};
inline DmaWaitAttrs dma_wait_attrs(const Graph& g, const Op& op) {
  const auto a = g.attrs(op);
  return {a[0], static_cast<WaitSide>(a[1])};
}
/// barrier_semaphore's attribute by name.
struct BarrierSemaphoreAttrs {
  std::int64_t collective_id;
};
inline BarrierSemaphoreAttrs barrier_semaphore_attrs(const Graph& g, const Op& op) { return {g.attrs(op)[0]}; }

// effects.hpp
extern const Primitive& debug_print;
extern const Primitive& io_callback;
extern const Primitive& delay;        // attrs [nanoseconds]
extern const Primitive& trace_value;  // attrs [label (graph string)]
/// debug_print's and io_callback's attributes by name: the payload (the
/// format, a graph string; the callback, a registry entry) and whether the
/// effect is ordered.
struct HostEffectAttrs {
  std::int64_t payload;
  bool ordered;
};
inline HostEffectAttrs host_effect_attrs(const Graph& g, const Op& op) {
  const auto a = g.attrs(op);
  return {a[0], a[1] != 0};
}

// fused.hpp
extern const Primitive& fused;
// shape_ops.hpp
extern const Primitive& reshape;
extern const Primitive& transpose;
// random.hpp
extern const Primitive& prng_seed;
extern const Primitive& prng_random_bits;
extern const Primitive& stochastic_round;
/// prng_random_bits' attributes by name: the call's number among the calls
/// since the last prng_seed of the trace (the shape follows it).
struct PrngRandomBitsAttrs {
  std::int64_t call;
};
inline PrngRandomBitsAttrs prng_random_bits_attrs(const Graph& g, const Op& op) { return {g.attrs(op)[0]}; }
}  // namespace refx::prim
