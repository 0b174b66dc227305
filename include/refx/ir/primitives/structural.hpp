#pragma once
// Non-elementwise array primitives: constants, iota, broadcast, cast,
// reductions along an axis, and the mesh-position scalars (dot is in dot.hpp).

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <refx/ir/detail/convert.hpp>
#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>

namespace refx::detail {

/// attrs: [dtype, bits]. The scalar's value, as its own type, from its bits.
template <class T>
T constant_value(std::int64_t bits) {
  if constexpr (is_floating_v<T> && !std::is_same_v<T, double>) return static_cast<T>(std::bit_cast<double>(bits));
  else if constexpr (std::is_same_v<T, double>) return std::bit_cast<double>(bits);
  else return static_cast<T>(bits);
}

inline void constant_abstract(AbstractContext& c) {
  if (c.num_attrs() != 2) c.fail("takes two attributes (the element type and the value's bits), got {}", c.num_attrs());
  c.add_output(ValueType{c.dtype_attr(0), ValueKind::array, MemorySpace::vmem, SemaphoreKind::none, {}});
}
inline ExecStatus constant_impl(ExecContext& ctx, const Op& op) {
  Buffer& out = ctx.out(op, 0);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    *out.data<T>() = constant_value<T>(prim::constant_attrs(ctx.graph(), op).bits);
  });
  return ExecStatus::done;
}
inline void constant_print(const Graph& g, const Op& op, std::string& s) {
  const prim::ConstantAttrs a = prim::constant_attrs(g, op);
  visit_dtype(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    s += fmt::format("{}", constant_value<T>(a.bits));
  });
}

// attrs: [dtype, dimension, rank, dims...]
inline void iota_abstract(AbstractContext& c) {
  const auto dt = c.dtype_attr(0);
  if (dt == DType::pred) c.fail("iota needs a numeric element type");
  const Shape s = c.shape_attrs(2);
  if (c.attr(1) < 0 || c.attr(1) >= static_cast<std::int64_t>(s.rank()))
    c.fail("dimension {} is not in a rank-{} shape", c.attr(1), s.rank());
  c.add_output(ValueType{dt, ValueKind::array, MemorySpace::vmem, SemaphoreKind::none, s});
}
inline ExecStatus iota_impl(ExecContext& ctx, const Op& op) {
  Buffer& out = ctx.out(op, 0);
  const auto dim = static_cast<std::size_t>(ctx.attr(op, 1));
  const auto st = out.shape().strides();
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    for (std::int64_t i = 0; i < out.size(); ++i) o[i] = static_cast<T>((i / st[dim]) % out.shape()[dim]);
  });
  return ExecStatus::done;
}

// attrs: [rank, dims...] of the result; input: a scalar, or a value of the
// result's rank whose every extent is the result's or 1 (stretched).
inline void broadcast_abstract(AbstractContext& c) {
  const ValueType& in = c.input(0);
  if (in.is_ref()) c.fail("broadcast takes a value; read the Ref with load() first");
  ValueType t = in;
  t.shape = c.shape_attrs(0);
  if (in.shape.rank() != 0) {
    if (in.shape.rank() != t.shape.rank())
      c.fail(
          "cannot broadcast a {} value to {}: the ranks differ (add dimensions of extent 1 with expand_dims or "
          "reshape first)",
          in.shape, t.shape);
    for (std::size_t d = 0; d < in.shape.rank(); ++d)
      if (in.shape[d] != t.shape[d] && in.shape[d] != 1)
        c.fail("cannot broadcast a {} value to {}: dimension {} has extent {}, which is neither {} nor 1", in.shape,
               t.shape, d, in.shape[d], t.shape[d]);
  }
  c.add_output(t);
}
inline ExecStatus broadcast_impl(ExecContext& ctx, const Op& op) {
  const Buffer& in = ctx.in(op, 0);
  Buffer& out = ctx.out(op, 0);
  read_broadcast(in.data(), in.shape(), out.shape(), size_of(in.dtype()), 0, out.size(), out.data());
  return ExecStatus::done;
}

// attrs: [dtype]
inline void cast_abstract(AbstractContext& c) {
  if (c.input(0).is_ref()) c.fail("cast takes a value; read the Ref with load() first");
  ValueType t = c.input(0);
  t.dtype = c.dtype_attr(0);
  c.add_output(t);
}
inline ExecStatus cast_impl(ExecContext& ctx, const Op& op) {
  convert_buffer(ctx.in(op, 0), ctx.out(op, 0));
  return ExecStatus::done;
}

// attrs: [axis] or [axis, keepdims]: with keepdims (1) the axis stays, of
// extent 1 (the same elements in the same order).
inline void reduce_abstract(AbstractContext& c) {
  const ValueType& in = c.input(0);
  if (in.is_ref()) c.fail("reductions take a value; read the Ref with load() first");
  if (in.dtype == DType::pred) c.fail("cannot reduce bool values");
  if (c.attr(0) < 0 || c.attr(0) >= static_cast<std::int64_t>(in.shape.rank()))
    c.fail("axis {} is out of range for a rank-{} value", c.attr(0), in.shape.rank());
  const auto axis = static_cast<std::size_t>(c.attr(0));
  ValueType t = in;
  if (c.num_attrs() > 1 && c.attr(1) != 0) t.shape[axis] = 1;
  else t.shape = in.shape.without(axis);
  c.add_output(t);
}
/// The combining step of reduce_sum / reduce_max / reduce_min on elements of
/// the accumulation type A. Integer sums wrap; a NaN anywhere along the axis
/// makes the maximum or minimum NaN, as in XLA. `Exact = false`: max and
/// min ignore a NaN x (one max / min instruction; see reduce_dense).
enum class ReduceKind { sum, max, min };
template <ReduceKind K, class A, bool Exact = true>
A reduce_combine(A acc, A x) {
  if constexpr (K == ReduceKind::sum) {
    return refx::detail::wrapping_add(acc, x);
  } else {
    // Taking a NaN x when acc is NaN too keeps a NaN; no branches, so loops vectorise.
    bool take = K == ReduceKind::max ? acc < x : x < acc;
    if constexpr (Exact && is_floating_v<A>) take = take | (x != x);
    return take ? x : acc;
  }
}
/// The identity: 0, or -inf / +inf (the lowest / highest integer) for max / min.
template <ReduceKind K, class A>
A reduce_init() {
  using L = std::numeric_limits<A>;
  if constexpr (K == ReduceKind::sum) return A{};
  else if constexpr (K == ReduceKind::max) return L::has_infinity ? -L::infinity() : L::lowest();
  else return L::has_infinity ? L::infinity() : L::max();
}

// Elements accumulate in compute_t<T> (bf16, f16 and fp8 sums in f32, rounded
// once when stored, as jnp.sum does). The order of a floating-point sum is
// unspecified, as in XLA: a contiguous axis is summed in 32 interleaved
// partial sums (element k into sum k mod 32; then sum l += sum l + 16 for
// l < 16, l += l + 8 for l < 8, ..., down to sum 0), loops the compiler
// vectorises, so they run at the adder's throughput, not its latency (8
// partial sums did not vectorise and ran 6x slower).
//
// Max and min of floats first run without NaN tests while summing the same
// elements on the side (two instructions per element instead of four); a
// NaN among the elements makes that sum NaN (so do infinities of both
// signs), and only then does the row or column run again exactly. Without a
// NaN both give the same result.
template <ReduceKind K, class T, bool Exact>
bool reduce_row(const T* row, std::int64_t n, T& out) {
  using A = compute_t<T>;
  constexpr bool watch = !Exact && K != ReduceKind::sum;
  constexpr std::int64_t lanes = watch ? 64 : 32;  // watch: more chains hide the adds' latency
  alignas(64) A part[lanes];
  alignas(64) A seen[lanes];
  std::fill_n(part, lanes, reduce_init<K, A>());
  std::fill_n(seen, lanes, A{});
  std::int64_t k = 0;
  for (; k + lanes <= n; k += lanes)
    for (std::int64_t l = 0; l < lanes; ++l) {
      const auto x = static_cast<A>(row[k + l]);
      part[l] = reduce_combine<K, A, Exact>(part[l], x);
      if constexpr (watch) seen[l] += x;
    }
  for (std::int64_t l = 0; k + l < n; ++l) {
    const auto x = static_cast<A>(row[k + l]);
    part[l] = reduce_combine<K, A, Exact>(part[l], x);
    if constexpr (watch) seen[l] += x;
  }
  // The lanes combine pairwise (vectorised too; one after another, they took
  // as long as the row itself for 1024 elements).
  for (std::int64_t w = lanes / 2; w > 0; w /= 2)
    for (std::int64_t l = 0; l < w; ++l) {
      part[l] = reduce_combine<K, A, Exact>(part[l], part[l + w]);  // a NaN here makes seen NaN too
      if constexpr (watch) seen[l] += seen[l + w];
    }
  if constexpr (watch)
    if (seen[0] != seen[0]) return false;
  out = static_cast<T>(part[0]);
  return true;
}

// `a` is dense: outer x n x inner elements, reduced along n into `o`.
template <ReduceKind K, class T>
void reduce_dense(const T* a, std::int64_t outer, std::int64_t n, std::int64_t inner, T* o) {
  using A = compute_t<T>;
  constexpr bool watch = K != ReduceKind::sum && is_floating_v<A>;
  if (inner == 1) {
    for (std::int64_t i = 0; i < outer; ++i)
      if (!reduce_row<K, T, !watch>(a + i * n, n, o[i])) reduce_row<K, T, true>(a + i * n, n, o[i]);
    return;
  }
  // Along an outer axis: whole rows combine elementwise (vectorised), into
  // the output itself, or into f32 rows for bf16, f16 and fp8.
  std::vector<A> wide(std::is_same_v<A, T> ? 0 : static_cast<std::size_t>(inner));
  std::vector<A> seen(watch ? static_cast<std::size_t>(inner) : 0);
  for (std::int64_t i = 0; i < outer; ++i) {
    A* acc = std::is_same_v<A, T> ? reinterpret_cast<A*>(o + i * inner) : wide.data();
    std::fill_n(acc, inner, reduce_init<K, A>());
    std::fill(seen.begin(), seen.end(), A{});
    for (std::int64_t k = 0; k < n; ++k) {
      const T* src = a + (i * n + k) * inner;
      if constexpr (watch) {
        A* s = seen.data();
        for (std::int64_t j = 0; j < inner; ++j) {
          const auto x = static_cast<A>(src[j]);
          acc[j] = reduce_combine<K, A, false>(acc[j], x);
          s[j] += x;
        }
      } else {
        for (std::int64_t j = 0; j < inner; ++j) acc[j] = reduce_combine<K, A>(acc[j], static_cast<A>(src[j]));
      }
    }
    if constexpr (watch)
      for (std::int64_t j = 0; j < inner; ++j)
        if (seen[static_cast<std::size_t>(j)] != seen[static_cast<std::size_t>(j)]) {
          A r = reduce_init<K, A>();
          for (std::int64_t k = 0; k < n; ++k) r = reduce_combine<K, A>(r, static_cast<A>(a[(i * n + k) * inner + j]));
          acc[j] = r;
        }
    if constexpr (!std::is_same_v<A, T>)
      for (std::int64_t j = 0; j < inner; ++j) o[i * inner + j] = static_cast<T>(acc[j]);
  }
}

// The operand is a value (input 0), or -- made by the fusion pass from a
// load with no other use -- a region of a Ref (view 0), read in place when
// it is one dense run.
template <ReduceKind K>
ExecStatus reduce_impl(ExecContext& ctx, const Op& op) {
  Buffer& out = ctx.out(op, 0);
  const auto axis = static_cast<std::size_t>(ctx.attr(op, 0));
  const Buffer* in = nullptr;
  const std::byte* data = nullptr;
  Shape shape;
  Buffer gathered;
  if (op.view_count == 1) {
    const ResolvedView v = ctx.view(op, 0);
    shape = v.shape;
    if (is_contiguous(v)) {
      data = v.buffer->data() + v.offset * static_cast<std::int64_t>(size_of(v.buffer->dtype()));
    } else {
      gathered = Buffer(v.buffer->dtype(), v.shape);
      read_view(v, gathered);
      data = gathered.data();
    }
    in = v.buffer;
  } else {
    in = &ctx.in(op, 0);
    shape = in->shape();
    data = in->data();
  }
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (std::size_t d = axis + 1; d < shape.rank(); ++d) inner *= shape[d];
  const std::int64_t n = shape[axis];
  visit_dtype(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>)
      reduce_dense<K, T>(reinterpret_cast<const T*>(data), outer, n, inner, out.data<T>());
  });
  return ExecStatus::done;
}

// attrs: [axis name string]
inline void axis_abstract(AbstractContext& c) {
  if (c.num_attrs() != 1) c.fail("takes one attribute (the axis name), got {}", c.num_attrs());
  c.add_output(ValueType{DType::i32, ValueKind::array, MemorySpace::smem, SemaphoreKind::none, {}});
}
template <bool Size>
ExecStatus axis_impl(ExecContext& ctx, const Op& op) {
  const std::string& axis = prim::axis_attrs(ctx.graph(), op).axis;
  *ctx.out(op, 0).data<std::int32_t>() = Size ? ctx.env().axis_size(axis) : ctx.env().axis_index(axis);
  return ExecStatus::done;
}
inline void axis_print(const Graph& g, const Op& op, std::string& s) {
  s += fmt::format("{}[axis={}]", op.prim->name, prim::axis_attrs(g, op).axis);
}

// attrs: [dim, size, stride, parent size(, context)]; input: an integer scalar start.
// `context` (a Graph string) says what made the view, for the error: e.g.
// the index map of a pipeline operand at a grid step (pipeline.hpp).
// The start of a view (size elements, stride apart) inside a parent view of
// `parent size` along `dim`, checked at run time, passed through unchanged.
// Views are composed into the base Ref's coordinates (make_view), where only
// the base's bounds are left to check: a traced start relative to a smaller
// parent view is checked here, before it is composed.
inline void index_check_abstract(AbstractContext& c) {
  const ValueType& in = c.input(0);
  if (in.is_ref() || in.shape.rank() != 0 || !is_integral(in.dtype)) c.fail("takes an integer scalar start");
  if (c.num_attrs() != 4 && c.num_attrs() != 5)
    c.fail("takes four attributes (dim, size, stride, parent size), got {}", c.num_attrs());  // (+ context)
  c.add_output(in);
}
inline ExecStatus index_check_impl(ExecContext& ctx, const Op& op) {
  const std::int64_t start = ctx.in(op, 0).as_int(0);
  const prim::IndexCheckAttrs a = prim::index_check_attrs(ctx.graph(), op);
  if (!window_fits(start, a.size, a.stride, a.parent_size)) {
    if (ctx.graph().attrs(op).size() > 4)
      runtime_error(op.loc, "{}: {}", ctx.graph().string(ctx.graph().attrs(op)[4]),
                    out_of_bounds_text(start, a.size, a.stride, a.dim, a.parent_size));
    throw index_out_of_bounds(start, a.size, a.stride, a.dim, a.parent_size, op.loc);
  }
  Buffer& out = ctx.out(op, 0);
  std::memcpy(out.data(), ctx.in(op, 0).data(), out.bytes());
  return ExecStatus::done;
}

constexpr Primitive simple(std::string_view name, void (*abstract)(AbstractContext&),
                           ExecStatus (*impl)(ExecContext&, const Op&),
                           void (*print)(const Graph&, const Op&, std::string&) = nullptr) {
  return Primitive{name, abstract, impl, print, nullptr, ControlKind::none, nullptr};
}

}  // namespace refx::detail

namespace refx::prim {

#if REFX_DEFINITIONS
// Constant-initialised (no dynamic initialisation): usable from any static
// initializer, whatever the order of translation units.
namespace defs {
inline constexpr Primitive constant = detail::as_pure(
    detail::simple("constant", detail::constant_abstract, detail::constant_impl, detail::constant_print));
inline constexpr Primitive iota = detail::as_pure(detail::simple("iota", detail::iota_abstract, detail::iota_impl));
inline constexpr Primitive broadcast =
    detail::as_pure(detail::simple("broadcast", detail::broadcast_abstract, detail::broadcast_impl));
inline constexpr Primitive cast = detail::as_pure(detail::simple("convert", detail::cast_abstract, detail::cast_impl));
inline constexpr Primitive reduce_sum = detail::as_pure(
    detail::simple("reduce_sum", detail::reduce_abstract, detail::reduce_impl<detail::ReduceKind::sum>));
inline constexpr Primitive reduce_max = detail::as_pure(
    detail::simple("reduce_max", detail::reduce_abstract, detail::reduce_impl<detail::ReduceKind::max>));
inline constexpr Primitive reduce_min = detail::as_pure(
    detail::simple("reduce_min", detail::reduce_abstract, detail::reduce_impl<detail::ReduceKind::min>));
inline constexpr Primitive axis_index =
    detail::as_pure(detail::simple("axis_index", detail::axis_abstract, detail::axis_impl<false>, detail::axis_print));
inline constexpr Primitive index_check =
    detail::simple("index_check", detail::index_check_abstract, detail::index_check_impl);
inline constexpr Primitive axis_size =
    detail::as_pure(detail::simple("axis_size", detail::axis_abstract, detail::axis_impl<true>, detail::axis_print));
}  // namespace defs
REFX_DECL constinit const Primitive& constant = defs::constant;
REFX_DECL constinit const Primitive& iota = defs::iota;
REFX_DECL constinit const Primitive& broadcast = defs::broadcast;
REFX_DECL constinit const Primitive& cast = defs::cast;
REFX_DECL constinit const Primitive& reduce_sum = defs::reduce_sum;
REFX_DECL constinit const Primitive& reduce_max = defs::reduce_max;
REFX_DECL constinit const Primitive& reduce_min = defs::reduce_min;
REFX_DECL constinit const Primitive& axis_index = defs::axis_index;
REFX_DECL constinit const Primitive& index_check = defs::index_check;
REFX_DECL constinit const Primitive& axis_size = defs::axis_size;
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim

// The list of built-in primitives is defined once every one of them is.
#define REFX_BUILTINS_STRUCTURAL_DEFINED
#include <refx/ir/primitives/detail/builtin_list.hpp>
