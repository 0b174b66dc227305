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
/// The minimum / maximum of two integers, an integer of their common type
/// (not recorded): an index map's clamp, `min(i, n - 1)`, then compiles with
/// the integer grid indices of an unrolled grid as with the traced ones of a
/// rolled grid. Integers of mixed signedness must have a signed common type.
template <std::integral A, std::integral B>
  requires(!std::is_same_v<A, bool> && !std::is_same_v<B, bool> &&
           (std::is_signed_v<std::common_type_t<A, B>> || (std::is_unsigned_v<A> && std::is_unsigned_v<B>)))
constexpr std::common_type_t<A, B> min(A a, B b) noexcept {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(b) < static_cast<C>(a) ? static_cast<C>(b) : static_cast<C>(a);
}
template <std::integral A, std::integral B>
  requires(!std::is_same_v<A, bool> && !std::is_same_v<B, bool> &&
           (std::is_signed_v<std::common_type_t<A, B>> || (std::is_unsigned_v<A> && std::is_unsigned_v<B>)))
constexpr std::common_type_t<A, B> max(A a, B b) noexcept {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(a) < static_cast<C>(b) ? static_cast<C>(b) : static_cast<C>(a);
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

/// `c ? a : b` elementwise; a scalar condition or branch is broadcast. A
/// constant condition (all true or all false) is the alternative it picks,
/// when that has the result's shape: bit for bit what the select gives.
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
    using EC = typename detail::operand_traits<C>::ext;
    using EA = typename detail::operand_traits<A>::ext;
    using EB = typename detail::operand_traits<B>::ext;
    static_assert(extents_broadcast<EA, EB> && extents_broadcast<EC, broadcast_extents_t<EA, EB>>,
                  "refx: select's condition and alternatives do not broadcast to one shape: their ranks must be "
                  "equal (or scalars), and each dimension equal or 1");
    using E = broadcast_extents_t<EC, broadcast_extents_t<EA, EB>>;
    ValueId ids[] = {c.id(), detail::operand<T>(a), detail::operand<T>(b)};
    detail::broadcast_operands(ids, "select", loc);
    // A constant condition selects one alternative whole: no select runs.
    const Graph& g = detail::Tracer::current(loc).graph();
    for (const std::size_t k : {std::size_t{1}, std::size_t{2}}) {
      const Shape& shape = g.type(ids[k]).shape;
      if (detail::is_constant_of(g, ids[0], k == 1 ? 1.0 : 0.0) && detail::stretches_to(g.type(ids[0]).shape, shape) &&
          detail::stretches_to(g.type(ids[3 - k]).shape, shape))
        return detail::wrap<T, E>(ids[k]);
    }
    return detail::wrap<T, E>(detail::apply(prim::select, {ids[0], ids[1], ids[2]}, {}, loc));
  }
}

namespace detail {
/// Whether every value of `narrow` survives a conversion to `wide` and back
/// bit for bit (a signaling NaN aside, which the round trip quiets).
constexpr bool round_trips(DType narrow, DType wide) noexcept {
  switch (narrow) {
    case DType::bf16:
    case DType::f16: return wide == DType::f32 || wide == DType::f64;
    case DType::f32: return wide == DType::f64;
    case DType::i8: return wide == DType::i32 || wide == DType::i64;
    case DType::u8: return wide == DType::i32 || wide == DType::u32 || wide == DType::i64;
    case DType::i32:
    case DType::u32: return wide == DType::i64;
    default: return false;
  }
}
/// The value a cast to `to` of `v` rewrites to, or no_id: `v` itself when it
/// is already of type `to` (Pallas' `x.astype(x.dtype)`), and `x` when `v` is
/// a widening cast of an `x` of type `to` (`x.astype(f32).astype(bf16)` of a
/// bf16 `x`). Neither runs: the results are the unrewritten graph's bits,
/// except that a signaling NaN is no longer quieted.
inline ValueId cast_rewrites_to(ValueId v, DType to, SourceLoc loc) {
  const Graph& g = Tracer::current(loc).graph();
  if (v < 0 || static_cast<std::size_t>(v) >= g.num_values()) return no_id;  // apply() names the problem
  const ValueInfo& info = g.value(v);
  if (info.type.dtype == to) return v;
  if (info.producer == no_id) return no_id;
  const Op& op = g.op(info.producer);
  if (op.prim != &prim::cast) return no_id;
  const ValueId x = g.inputs(op)[0];
  return g.type(x).dtype == to && round_trips(to, info.type.dtype) ? x : no_id;
}
}  // namespace detail

/// Converts every element to U. A cast to the value's own type, or back
/// through a wider type it came from, is no op (detail::cast_rewrites_to).
template <Element U, class T, class E>
Value<U, E> cast(const Value<T, E>& v, refx::source_location loc = refx::source_location::current()) {
  if (const ValueId same = detail::cast_rewrites_to(v.id(), dtype_v<U>, loc); same != no_id)
    return detail::wrap<U, E>(same);
  const std::int64_t attrs[] = {static_cast<std::int64_t>(dtype_v<U>)};
  return detail::wrap<U, E>(detail::apply(prim::cast, {v.id()}, attrs, loc));
}

/// A cast to a type that is no refx element type (std::int16_t, long double,
/// ...): one sentence listing the element types instead of "no matching
/// function".
template <class U, class T, class E>
  requires(!Element<U>)
Value<T, E> cast(const Value<T, E>& v, refx::source_location = refx::source_location::current()) {
  static_assert(Element<U>,
                "refx: cast<U>'s element type must be one of bool, i8, u8, i32, u32, i64, f8e4m3fn, f8e5m2, bf16, f16, "
                "f32, f64 (std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t, refx::f8e4m3fn, "
                "refx::f8e5m2, refx::bf16, refx::f16, float, double); there are no 16-bit integers: cast to "
                "std::int32_t and store into a std::int32_t Ref");
  return v;
}

namespace detail {
template <std::size_t Axis, class E, std::size_t... I>
auto drop_axis(std::index_sequence<I...>) -> extents<E::values[I < Axis ? I : I + 1]...>;
template <std::size_t Axis, class E>
using drop_axis_t = decltype(drop_axis<Axis, E>(std::make_index_sequence<(E::rank > 0 ? E::rank - 1 : 0)>{}));
template <std::size_t Axis, class E, std::size_t... I>
auto keep_axis(std::index_sequence<I...>) -> extents<(I == Axis ? 1 : E::values[I])...>;
template <std::size_t Axis, class E, std::size_t... I>
auto insert_axis(std::index_sequence<I...>) -> extents<(I == Axis ? 1 : E::values[I < Axis ? I : I - 1])...>;

/// Whether `Axis` names a dimension of a rank-`Rank` value: 0 .. Rank - 1,
/// or counted from the end, -Rank .. -1 (as numpy and JAX count).
template <auto Axis, std::size_t Rank>
constexpr bool axis_in_range() {
  if constexpr (!std::is_integral_v<decltype(Axis)> || std::is_same_v<decltype(Axis), bool>) return false;
  else return std::cmp_greater_equal(Axis, -static_cast<std::int64_t>(Rank)) && std::cmp_less(Axis, Rank);
}
/// That dimension, counted from the front (0 when out of range: the caller's
/// static_assert has said so).
template <auto Axis, std::size_t Rank>
constexpr std::size_t axis_index_of() {
  if constexpr (!axis_in_range<Axis, Rank>()) return 0;
  else
    return static_cast<std::size_t>(std::cmp_less(Axis, 0) ? static_cast<std::int64_t>(Axis) + std::int64_t{Rank}
                                                           : static_cast<std::int64_t>(Axis));
}

/// Tells apart the keepdims form of a reduction.
struct keepdims_t {
  explicit constexpr keepdims_t() = default;
};

template <bool Keep, std::size_t Axis, class E>
using reduced_extents_t =
    std::conditional_t<Keep, decltype(keep_axis<Axis, E>(std::make_index_sequence<E::rank>{})), drop_axis_t<Axis, E>>;

template <bool Keep, std::size_t Axis, class T, class E>
auto reduce(const Primitive& p, const Value<T, E>& v, SourceLoc loc) {
  const std::int64_t attrs[] = {static_cast<std::int64_t>(Axis), 1};
  return wrap<T, reduced_extents_t<Keep, Axis, E>>(Tracer::current(loc).bind1(
      p, std::span<const ValueId>(std::array{v.id()}), {}, std::span<const std::int64_t>(attrs, Keep ? 2 : 1), loc));
}
}  // namespace detail

/// Pass to a reduction to keep the reduced axis, with extent 1 (numpy's and
/// JAX's keepdims=True): `x - reduce_max<1>(x, keepdims)` subtracts each
/// row's maximum.
inline constexpr detail::keepdims_t keepdims{};

// The reductions, alike but for the name; Axis counts from the end when
// negative (-1: the last axis), as in JAX. Without keepdims the axis is
// removed.
#define REFX_REDUCTION(name)                                                                                          \
  template <auto Axis, class T, class E>                                                                              \
  auto name(const Value<T, E>& v, refx::source_location loc = refx::source_location::current()) {                     \
    static_assert(detail::axis_in_range<Axis, E::rank>(),                                                             \
                  "refx: " #name                                                                                      \
                  " axis is out of range for this value's rank (axes go from 0 to rank - 1, or from "                 \
                  "-rank to -1 counting from the end)");                                                              \
    return detail::reduce<false, detail::axis_index_of<Axis, E::rank>()>(prim::name, v, loc);                         \
  }                                                                                                                   \
  template <auto Axis, class T, class E>                                                                              \
  auto name(const Value<T, E>& v, detail::keepdims_t, refx::source_location loc = refx::source_location::current()) { \
    static_assert(detail::axis_in_range<Axis, E::rank>(),                                                             \
                  "refx: " #name                                                                                      \
                  " axis is out of range for this value's rank (axes go from 0 to rank - 1, or from "                 \
                  "-rank to -1 counting from the end)");                                                              \
    return detail::reduce<true, detail::axis_index_of<Axis, E::rank>()>(prim::name, v, loc);                          \
  }                                                                                                                   \
  template <class T, class E, class... Rest>                                                                          \
  Value<T, E> name(const Value<T, E>&, Rest&&...) {                                                                   \
    static_assert(detail::dependent_false<T>, "refx: " #name " needs the axis to reduce: " #name                      \
                                              "<Axis>(v), or " #name "<Axis>(v, keepdims) to keep it with extent 1"); \
    return {};                                                                                                        \
  }
/// Sum along `Axis`.
REFX_REDUCTION(reduce_sum)
/// Maximum along `Axis`.
REFX_REDUCTION(reduce_max)
/// Minimum along `Axis`.
REFX_REDUCTION(reduce_min)
#undef REFX_REDUCTION

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

namespace detail {
// Whether extents E broadcast to the static extents Dims..., aligned at the end.
template <class E, std::int64_t... Dims>
constexpr bool broadcasts_to() {
  constexpr std::array<std::int64_t, sizeof...(Dims)> to{Dims...};
  if (E::rank > to.size()) return false;
  const std::size_t lead = to.size() - E::rank;
  for (std::size_t i = 0; i < E::rank; ++i)
    if (E::values[i] != to[lead + i] && E::values[i] != 1 && E::values[i] != dyn) return false;
  return true;
}
/// What a reshape of `v` to extents `s` rewrites to, or no_id; each gives the
/// same elements in the same order, so the same bits:
/// - `v` itself when it has extents `s` (`tile<1, 1>(x)`'s reshapes);
/// - the value a reshape made `v` from, when that has extents `s`, or a
///   reshape of it (one copy instead of two);
/// - a load of `v`'s region presented with extents `s`, when `v` is the
///   result of the load traced last in the current block (nothing can have
///   written the Ref since) of a plain view that is one dense run of its
///   Ref: `reshape(r.load())` is `r.reshape<...>().load()`, read once
///   instead of read and copied, and in place when the read_in_place pass
///   allows it (Pallas' `buf[...].reshape(...)`).
inline ValueId reshape_to(ValueId v, const Shape& s, SourceLoc loc);
inline ValueId reshape_rewrites_to(ValueId v, const Shape& s, SourceLoc loc) {
  Tracer& t = Tracer::current(loc);
  Graph& g = t.graph();
  if (v < 0 || static_cast<std::size_t>(v) >= g.num_values()) return no_id;  // apply() names the problem
  t.check_value(v, loc);  // a Value out of its body is named here, as the reshape would name it
  const ValueInfo& info = g.value(v);
  if (info.type.is_ref() || s.num_elements() != info.type.shape.num_elements()) return no_id;
  if (info.type.shape == s) return v;
  if (info.producer == no_id) return no_id;
  const Op& op = g.op(info.producer);
  if (op.prim == &prim::reshape) {
    const ValueId from = g.inputs(op)[0];
    return g.type(from).shape == s ? from : reshape_to(from, s, loc);
  }
  const auto& ops = g.block(t.current_block()).ops;
  if (op.prim != &prim::load || op.attr_count != 0 || op.view_count != 1 || ops.empty() || ops.back() != info.producer)
    return no_id;
  const ViewId view = g.views(op)[0];
  if (g.view(view).layout != no_id || !footprint_is_dense(g, view)) return no_id;
  const ViewId reshaped = g.add_reinterpreted_view(view, ViewLayout{info.type.dtype, s});
  t.inherit_view_error(view, reshaped, {});
  const ViewId views[] = {reshaped};
  return t.bind1(prim::load, {}, views, {}, op.loc);
}
inline ValueId reshape_to(ValueId v, const Shape& s, SourceLoc loc) {
  if (const ValueId loaded = reshape_rewrites_to(v, s, loc); loaded != no_id) return loaded;
  std::vector<std::int64_t> attrs{static_cast<std::int64_t>(s.rank())};
  attrs.insert(attrs.end(), s.begin(), s.end());
  const ValueId ins[] = {v};
  return Tracer::current(loc).bind1(prim::reshape, ins, {}, attrs, loc);
}
}  // namespace detail

/// `v` broadcast to the static extents `Dims...`, as jnp.broadcast_to: v's
/// dimensions are the last ones of the result (lax.broadcast_in_dim with
/// broadcast_dimensions = (R - r, ..., R - 1)), each of the result's extent
/// or 1 (stretched); the leading ones are new. `broadcast_to<128, 256>(row)`
/// repeats a <1, 256> or <256> row 128 times. A dimension to insert
/// elsewhere comes from expand_dims first.
template <std::int64_t... Dims, class T, class E>
Value<T, extents<Dims...>> broadcast_to(const Value<T, E>& v,
                                        refx::source_location loc = refx::source_location::current()) {
  static_assert(((Dims != dyn) && ...), "refx: broadcast_to<Dims...> takes static extents (no refx::dyn)");
  static_assert(detail::broadcasts_to<E, Dims...>(),
                "refx: broadcast_to cannot stretch this Value to these extents: the Value's dimensions align with the "
                "last ones of the result, and each must be the result's extent or 1 (insert a dimension elsewhere "
                "with expand_dims first)");
  const Shape to{Dims...};
  ValueId id = v.id();
  const Shape from = v.shape();
  if (from.rank() != 0 && from.rank() < to.rank()) {
    Shape lead;
    for (std::size_t i = 0; i < to.rank() - from.rank(); ++i) lead.push_back(1);
    for (std::int64_t d : from) lead.push_back(d);
    id = detail::reshape_to(id, lead, loc);
  }
  if (!(from == to)) id = detail::broadcast_to(id, to, loc);
  return detail::wrap<T, extents<Dims...>>(id);
}

/// `v` with a new dimension of extent 1 at `Axis` (jnp.expand_dims; a
/// negative Axis counts from the end of the result: -1 appends one). The
/// same elements in the same order: `m[:, None]` is `expand_dims<1>(m)`.
template <auto Axis, class T, class E>
auto expand_dims(const Value<T, E>& v, refx::source_location loc = refx::source_location::current()) {
  static_assert(detail::axis_in_range<Axis, E::rank + 1>(),
                "refx: expand_dims axis is out of range: a rank-r Value takes axes from 0 to r, or from -(r + 1) to -1 "
                "counting from the end of the result");
  constexpr std::size_t axis = detail::axis_index_of<Axis, E::rank + 1>();
  using R = decltype(detail::insert_axis<axis, E>(std::make_index_sequence<E::rank + 1>{}));
  const Shape from = v.shape();
  Shape to;
  for (std::size_t d = 0; d <= from.rank(); ++d) to.push_back(d == axis ? 1 : from[d < axis ? d : d - 1]);
  return detail::wrap<T, R>(detail::reshape_to(v.id(), to, loc));
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
  if (const ValueId loaded = detail::reshape_rewrites_to(v.id(), Shape{Dims...}, loc); loaded != no_id)
    return detail::wrap<T, extents<Dims...>>(loaded);
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

/// jnp.transpose(x, axes) of any rank: result axis k is x's axis Axes[k].
template <std::size_t... Axes, class T, class E>
  requires(sizeof...(Axes) > 0)
auto transpose(const Value<T, E>& v, refx::source_location loc = refx::source_location::current()) {
  constexpr bool permutation = [] {
    if (sizeof...(Axes) != E::rank) return false;
    bool used[sizeof...(Axes)]{};
    for (const std::size_t a : {Axes...}) {
      if (a >= E::rank || used[a]) return false;
      used[a] = true;
    }
    return true;
  }();
  static_assert(permutation,
                "refx: transpose<Axes...> takes a permutation of the Value's axes (each axis once, one per dimension)");
  if constexpr (permutation) {
    const std::int64_t attrs[] = {static_cast<std::int64_t>(Axes)...};
    return detail::wrap<T, extents<E::values[Axes]...>>(detail::apply(prim::transpose, {v.id()}, attrs, loc));
  }
}

namespace detail {
/// The mesh's axis named `axis`; a TraceError at the user's line if it has none.
REFX_DECL const Mesh::Axis& traced_mesh_axis(const Mesh& m, std::string_view axis, SourceLoc loc);
REFX_DECL Scalar<std::int32_t> axis_scalar(const Primitive& p, std::string_view axis, SourceLoc loc);
#if REFX_DEFINITIONS
REFX_DECL void broadcast_operands(std::span<ValueId> ids, std::string_view what, SourceLoc loc) {
  auto& t = Tracer::current(loc);
  const auto fail = [&](const Hint& h, const std::string& message) {
    if (loc.known()) trace_error(loc, h, "{}", message);
    trace_error_near(t.near(), h, "{}", message);
  };
  std::vector<Shape> shapes;
  for (ValueId id : ids) shapes.push_back(t.graph().type(id).shape);
  Shape out;
  std::size_t from = ids.size();  // the first operand with a rank
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Shape& s = shapes[i];
    if (s.rank() == 0) continue;
    if (from == ids.size()) {
      out = s;
      from = i;
      continue;
    }
    if (s.rank() != out.rank())
      fail(
          hint("give the lower-rank one its missing dimensions of extent 1 with expand_dims or reshape"),
          fmt::format("operands {} and {} of {} have ranks {} and {} ({} and {}); they must be equal (or one a scalar)",
                      from, i, what, out.rank(), s.rank(), out, s));
    for (std::size_t d = 0; d < s.rank(); ++d) {
      if (s[d] == out[d] || s[d] == 1) continue;
      if (out[d] != 1)
        fail(hint("each dimension must be equal, or 1 on one side"),
             fmt::format("the shapes {} and {} of {}'s operands do not broadcast: dimension {} is {} on one side and "
                         "{} on the other",
                         out, s, what, d, out[d], s[d]));
      out[d] = s[d];
    }
  }
  if (from == ids.size()) return;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (!(shapes[i] == out)) ids[i] = broadcast_to(ids[i], out, loc);
}

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
/// The size of mesh axis `axis` as a C++ integer, known while the kernel is
/// traced for its mesh (Pallas' lax.psum(1, axis), a Python int under
/// shard_map): a plain C++ loop over the devices unrolls with it.
REFX_DECL std::int64_t mesh_axis_size(AxisName axis, refx::source_location loc = refx::source_location::current());
#if REFX_DEFINITIONS
REFX_DECL std::int64_t mesh_axis_size(AxisName axis, refx::source_location loc) {
  const Mesh* m = detail::Tracer::current(loc).mesh();
  if (m == nullptr)
    trace_error(loc, hint("compile the kernel for a mesh (kernel(f).compile(mesh)), or use axis_size, a traced value"),
                "mesh_axis_size(\"{}\") needs the mesh the kernel is traced for, and this trace has none",
                std::string_view(axis));
  return detail::traced_mesh_axis(*m, axis, loc).size;
}
#endif

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
