#pragma once
// The named operations on Values (value.hpp has the type and its operators):
// shifts, pow, min / max, not, the unary functions, select, cast, reductions,
// full / iota / broadcast / reshape / transpose, and the mesh-position
// scalars (axis_index, axis_size, at_kernel_entry); dot is in value_dot.hpp.
// Part of trace/value.hpp, which includes it at its end (so it includes
// nothing back).

namespace refx {

/// XLA's shifts: by the bit width or more, shift_left and shift_right_logical
/// give 0 and shift_right_arithmetic gives 0 or -1 (the sign filled in). The
/// amount is read as unsigned (a negative amount shifts everything out).
template <class A, class B>
  requires detail::binary_operands<A, B>
auto shift_left(const A& a, const B& b) {
  return detail::shift(prim::shift_left, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto shift_right_logical(const A& a, const B& b) {
  return detail::shift(prim::shift_right_logical, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto shift_right_arithmetic(const A& a, const B& b) {
  return detail::shift(prim::shift_right_arithmetic, a, b);
}

/// Elementwise a^b of floating-point values (a literal exponent is allowed).
template <class A, class B>
  requires detail::binary_operands<A, B>
auto pow(const A& a, const B& b) {
  static_assert(is_floating_v<detail::binary_element<A, B>>, "refx: pow needs floating-point values; cast them first");
  return detail::binary<false>(prim::pow, a, b);
}
/// Elementwise minimum / maximum of two values (or a value and a literal).
template <class A, class B>
  requires detail::binary_operands<A, B>
auto min(const A& a, const B& b) {
  return detail::binary<false>(prim::min, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto max(const A& a, const B& b) {
  return detail::binary<false>(prim::max, a, b);
}

template <class T, class E>
Value<T, E> operator-(const Value<T, E>& a) {
  return detail::wrap<T, E>(detail::apply(prim::neg, {a.id()}));
}
template <class E>
Value<bool, E> operator!(const Value<bool, E>& a) {
  return detail::wrap<bool, E>(detail::apply(prim::logical_not, {a.id()}));
}
/// Bitwise not of an integer Value (logical not of a bool one).
template <class T, class E>
Value<T, E> operator~(const Value<T, E>& a) {
  static_assert(std::is_integral_v<T>,
                "refx: ~ flips the bits of integer values (or negates bool ones), not floating point");
  return detail::wrap<T, E>(detail::apply(prim::logical_not, {a.id()}));
}
template <class T, class E>
Value<T, E> abs(const Value<T, E>& a, refx::source_location loc = refx::source_location::current()) {
  return detail::wrap<T, E>(detail::apply(prim::abs, {a.id()}, {}, loc));
}

// The floating-point functions, alike but for the name; a static_assert
// message must be a string literal, so the name is spliced in (#name).
#define REFX_FLOATING_FN(name)                                                                           \
  template <class T, class E>                                                                            \
  Value<T, E> name(const Value<T, E>& a, refx::source_location loc = refx::source_location::current()) { \
    static_assert(is_floating_v<T>, "refx: " #name " needs a floating-point value; cast it first");      \
    return detail::wrap<T, E>(detail::apply(prim::name, {a.id()}, {}, loc));                             \
  }
REFX_FLOATING_FN(exp)
REFX_FLOATING_FN(log)
REFX_FLOATING_FN(sqrt)
/// 1 / sqrt(a).
REFX_FLOATING_FN(rsqrt)
REFX_FLOATING_FN(tanh)
/// The sigmoid 1 / (1 + exp(-a)) (lax.logistic).
REFX_FLOATING_FN(logistic)
/// log(1 + a), accurate for small a.
REFX_FLOATING_FN(log1p)
/// exp(a) - 1, accurate for small a.
REFX_FLOATING_FN(expm1)
/// The error function.
REFX_FLOATING_FN(erf)
REFX_FLOATING_FN(sin)
REFX_FLOATING_FN(cos)
#undef REFX_FLOATING_FN

/// `c ? a : b` elementwise; a scalar condition or branch is broadcast.
template <class C, class A, class B>
  requires(!is_ref_v<C> && !is_ref_v<A> && !is_ref_v<B>)
auto select(const C& c, const A& a, const B& b, refx::source_location loc = refx::source_location::current()) {
  constexpr bool bool_cond = [] {
    if constexpr (is_value_v<C>) return std::is_same_v<typename C::element_type, bool>;
    else return false;
  }();
  static_assert(bool_cond, "refx: select's condition must be a bool Value (a comparison)");
  constexpr bool one_type = [] {
    if constexpr (is_value_v<A> && is_value_v<B>)
      return std::is_same_v<typename A::element_type, typename B::element_type>;
    else return true;
  }();
  static_assert(one_type,
                "refx: select's two alternatives must have one element type; convert one with refx::cast<T>(v)");
  if constexpr (!bool_cond || !one_type) {
    return Value<float>{};  // not reached: a check above failed to compile
  } else {
    using T = detail::binary_element<A, B>;
    using E = detail::binary_extents<
        typename detail::operand_traits<C>::ext,
        detail::binary_extents<typename detail::operand_traits<A>::ext, typename detail::operand_traits<B>::ext>>;
    ValueId ic = c.id(), ia = detail::operand<T>(a), ib = detail::operand<T>(b);
    auto& g = detail::Tracer::current(loc).graph();
    Shape s;
    for (ValueId v : {ic, ia, ib})
      if (g.type(v).shape.rank() > s.rank()) s = g.type(v).shape;
    for (ValueId* v : {&ic, &ia, &ib})
      if (g.type(*v).shape.rank() == 0 && s.rank() != 0) *v = detail::broadcast_to(*v, s, loc);
    return detail::wrap<T, E>(detail::apply(prim::select, {ic, ia, ib}, {}, loc));
  }
}

/// Converts every element to U.
template <Element U, class T, class E>
Value<U, E> cast(const Value<T, E>& v, refx::source_location loc = refx::source_location::current()) {
  const std::int64_t attrs[] = {static_cast<std::int64_t>(dtype_v<U>)};
  return detail::wrap<U, E>(detail::apply(prim::cast, {v.id()}, attrs, loc));
}

namespace detail {
template <std::size_t Axis, class E, std::size_t... I>
auto drop_axis(std::index_sequence<I...>) -> extents<E::values[I < Axis ? I : I + 1]...>;
template <std::size_t Axis, class E>
using drop_axis_t = decltype(drop_axis<Axis, E>(std::make_index_sequence<(E::rank > 0 ? E::rank - 1 : 0)>{}));
}  // namespace detail

/// Sum along `Axis` (the axis is removed).
template <std::size_t Axis, class T, class E>
auto reduce_sum(const Value<T, E>& v, refx::source_location loc = refx::source_location::current()) {
  static_assert(Axis < E::rank, "refx: reduce_sum axis is out of range for this value's rank");
  const std::int64_t attrs[] = {static_cast<std::int64_t>(Axis)};
  return detail::wrap<T, detail::drop_axis_t<Axis, E>>(detail::apply(prim::reduce_sum, {v.id()}, attrs, loc));
}
/// Maximum along `Axis` (the axis is removed).
template <std::size_t Axis, class T, class E>
auto reduce_max(const Value<T, E>& v, refx::source_location loc = refx::source_location::current()) {
  static_assert(Axis < E::rank, "refx: reduce_max axis is out of range for this value's rank");
  const std::int64_t attrs[] = {static_cast<std::int64_t>(Axis)};
  return detail::wrap<T, detail::drop_axis_t<Axis, E>>(detail::apply(prim::reduce_max, {v.id()}, attrs, loc));
}

/// Minimum along `Axis` (the axis is removed).
template <std::size_t Axis, class T, class E>
auto reduce_min(const Value<T, E>& v, refx::source_location loc = refx::source_location::current()) {
  static_assert(Axis < E::rank, "refx: reduce_min axis is out of range for this value's rank");
  const std::int64_t attrs[] = {static_cast<std::int64_t>(Axis)};
  return detail::wrap<T, detail::drop_axis_t<Axis, E>>(detail::apply(prim::reduce_min, {v.id()}, attrs, loc));
}

/// A value of shape `s` filled with `v`.
template <Element T, class E>
Value<T, E> full(TypedShape<E> s, T v, refx::source_location loc = refx::source_location::current()) {
  return detail::wrap<T, E>(detail::constant<T>(v, s.shape, loc));
}
template <Element T, std::int64_t... Dims>
Value<T, extents<Dims...>> full(T v, refx::source_location loc = refx::source_location::current()) {
  return full<T>(TypedShape<extents<Dims...>>{Shape{Dims...}}, v, loc);
}
template <Element T, class E>
Value<T, E> zeros(TypedShape<E> s, refx::source_location loc = refx::source_location::current()) {
  return full<T>(s, T{}, loc);
}
template <Element T, std::int64_t... Dims>
Value<T, extents<Dims...>> zeros(refx::source_location loc = refx::source_location::current()) {
  return full<T, Dims...>(T{}, loc);
}

/// Element indices along dimension `dim` of shape `s`.
template <Element T, class E>
Value<T, E> iota(TypedShape<E> s, std::size_t dim, refx::source_location loc = refx::source_location::current()) {
  std::vector<std::int64_t> attrs{static_cast<std::int64_t>(dtype_v<T>), static_cast<std::int64_t>(dim),
                                  static_cast<std::int64_t>(s.shape.rank())};
  attrs.insert(attrs.end(), s.shape.begin(), s.shape.end());
  return detail::wrap<T, E>(detail::Tracer::current(loc).bind1(prim::iota, {}, {}, attrs, loc));
}
template <Element T, std::int64_t... Dims>
Value<T, extents<Dims...>> iota(std::size_t dim, refx::source_location loc = refx::source_location::current()) {
  return iota<T>(TypedShape<extents<Dims...>>{Shape{Dims...}}, dim, loc);
}

/// A scalar broadcast to shape `s`.
template <class T, class E>
Value<T, E> broadcast(const Scalar<T>& v, TypedShape<E> s,
                      refx::source_location loc = refx::source_location::current()) {
  return detail::wrap<T, E>(detail::broadcast_to(v.id(), s.shape, loc));
}

/// The same elements, in row-major order, with the static extents `Dims...`.
template <std::int64_t... Dims, class T, class E>
Value<T, extents<Dims...>> reshape(const Value<T, E>& v, refx::source_location loc = refx::source_location::current()) {
  static_assert(((Dims != dyn) && ...), "refx: reshape<Dims...> takes static extents (no refx::dyn)");
  constexpr bool known = [] {
    for (std::size_t i = 0; i < E::rank; ++i)
      if (E::values[i] == dyn) return false;
    return true;
  }();
  constexpr std::int64_t from = [] {
    std::int64_t n = 1;
    for (std::size_t i = 0; i < E::rank; ++i) n *= E::values[i];
    return n;
  }();
  static_assert(!known || from == (std::int64_t{1} * ... * Dims),
                "refx: reshape must keep the element count; the target extents hold a different number of elements "
                "than the Value");
  const std::int64_t attrs[] = {static_cast<std::int64_t>(sizeof...(Dims)), Dims...};
  return detail::wrap<T, extents<Dims...>>(detail::apply(prim::reshape, {v.id()}, attrs, loc));
}

/// The transpose of a matrix (rank-2 value).
template <class T, class E>
auto transpose(const Value<T, E>& v, refx::source_location loc = refx::source_location::current()) {
  static_assert(E::rank == 2, "refx: transpose takes a matrix (a rank-2 Value)");
  if constexpr (E::rank == 2) {
    return detail::wrap<T, extents<E::values[1], E::values[0]>>(detail::apply(prim::transpose, {v.id()}, {}, loc));
  }
}

namespace detail {
/// The mesh's axis named `axis`; a TraceError at the user's line if it has none.
REFX_DECL const Mesh::Axis& traced_mesh_axis(const Mesh& m, std::string_view axis, SourceLoc loc);
REFX_DECL Scalar<std::int32_t> axis_scalar(const Primitive& p, std::string_view axis, SourceLoc loc);
#if REFX_DEFINITIONS
REFX_DECL const Mesh::Axis& traced_mesh_axis(const Mesh& m, std::string_view axis, SourceLoc loc) {
  for (const Mesh::Axis& a : m.axes())
    if (a.name == axis) return a;
  trace_error(loc, "the mesh {} has no axis \"{}\"", m.describe(), axis);
}
REFX_DECL Scalar<std::int32_t> axis_scalar(const Primitive& p, std::string_view axis, SourceLoc loc) {
  auto& t = Tracer::current(loc);
  if (const Mesh* m = t.mesh()) (void)traced_mesh_axis(*m, axis, loc);
  const std::int64_t attrs[] = {t.graph().add_string(std::string(axis))};
  return wrap<std::int32_t, extents<>>(t.bind1(p, {}, {}, attrs, loc));
}
#endif  // REFX_DEFINITIONS

}  // namespace detail

/// This device's index along a named mesh axis, and the axis' size.
inline Scalar<std::int32_t> axis_index(AxisName axis, refx::source_location loc = refx::source_location::current()) {
  return detail::axis_scalar(prim::axis_index, axis, loc);
}
inline Scalar<std::int32_t> axis_size(AxisName axis, refx::source_location loc = refx::source_location::current()) {
  return detail::axis_scalar(prim::axis_size, axis, loc);
}

/// True while the kernel being traced has done nothing with an effect yet
/// (no Ref read or written, no semaphore or copy, no host effect) and the
/// call is at its top level, not in a loop, branch or scope body. There,
/// every device's Refs are untouched by this launch and every earlier
/// launch has ended on every device (launches of one runtime run one at a
/// time; across MPI ranks, launch k ends everywhere before k+1 starts), and
/// scoped scratch is allocated before any device runs. So a collective
/// traced here may write into its peers at once: it needs no entry barrier.
inline bool at_kernel_entry(refx::source_location loc = refx::source_location::current()) {
  return detail::Tracer::current(loc).at_entry();
}

/// A slice whose start is a traced scalar.
template <std::integral I>
Slice ds(const Scalar<I>& start, std::int64_t size, std::int64_t stride = 1) {
  Slice s = ds(0, size, stride);
  s.start = DynIndex{0, start.id()};
  return s;
}

}  // namespace refx
