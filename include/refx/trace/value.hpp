#pragma once
// Value<T, extents<...>>: an immutable traced block of data (or a scalar).
// Arithmetic on Values records ops; nothing is computed until the graph runs.

#include <bit>
#include <concepts>
#include <refx/core/source_location.hpp>
#include <string_view>
#include <type_traits>
#include <utility>

#include <refx/core/detail/checked_args.hpp>
#include <refx/core/dtype.hpp>
#include <refx/core/shape.hpp>
#include <refx/core/slice.hpp>
#include <refx/ir/attrs.hpp>
#include <refx/ir/primitives/builtins.hpp>
#include <refx/trace/detail/tracer.hpp>

namespace refx {

namespace detail {
struct value_base {};
struct ref_base {};
}  // namespace detail

template <class T>
inline constexpr bool is_value_v = std::is_base_of_v<detail::value_base, std::remove_cvref_t<T>>;
template <class T>
inline constexpr bool is_ref_v = std::is_base_of_v<detail::ref_base, std::remove_cvref_t<T>>;

template <Element T, class E = extents<>>
class Value;

namespace detail {
template <class T, class E>
Value<T, E> wrap(ValueId id);
template <class T, class U>
T literal_as(U literal, std::string_view what, std::string_view where, SourceLoc loc);
}  // namespace detail

template <Element T, class E>
class Value : public detail::value_base {
  static_assert(!std::is_const_v<T>, "refx: a Value is immutable already; write Value<T>, not Value<const T>");
  static_assert(is_extents<E>::value, "refx: the second argument of Value must be refx::extents<...>");

 public:
  using element_type = T;
  using extents_type = E;
  static constexpr std::size_t rank = E::rank;

  Value() = default;
  /// A literal becomes a traced constant (scalars only).
  Value(T literal, refx::source_location loc = refx::source_location::current())  // NOLINT: implicit on purpose, so
    requires(rank == 0)  // `x + 1` and `Scalar<int> i = 0` read naturally
  {
    auto& t = detail::Tracer::current(loc);
    const std::int64_t bits = is_floating_v<T> ? std::bit_cast<std::int64_t>(static_cast<double>(literal))
                                                          : static_cast<std::int64_t>(literal);
    const std::int64_t attrs[] = {static_cast<std::int64_t>(dtype_v<T>), bits};
    id_ = t.bind1(prim::constant, {}, {}, attrs, loc);
    trace_ = t.serial();
  }

  /// An integer Scalar (a device id, loop bound, semaphore count or
  /// increment, index) from a floating-point number, or a 32/64-bit one from
  /// a wider integer: rejected here, where the conversion would otherwise be
  /// silent.
  template <class U>
    requires(rank == 0 && is_integer_v<T> && std::is_floating_point_v<U>)
  Value(U, refx::source_location = refx::source_location::current()) {  // NOLINT: implicit, to be rejected
    static_assert(detail::dependent_false<U>,
                  "refx: a floating-point number where an integer is expected (a device id, loop bound, semaphore "
                  "count or increment, step or index) would be truncated; write an integer, or convert explicitly "
                  "with static_cast<std::int32_t>(...)");
  }
  /// An integer Scalar from a C++ integer of another type: accepted when every
  /// value of that type fits (detail::integer_lossless_v: std::int16_t or
  /// std::uint16_t into an i32, std::int32_t into an i64); rejected when it may
  /// not (a wider integer, an unsigned one into a signed element type of its
  /// width, a signed one into an unsigned element type). `int`, the type of
  /// an integer literal, is the exception: `Scalar<std::uint32_t> m = 0xFF`
  /// and `Scalar<std::int8_t> k = 1` compile, and a value the element type
  /// cannot hold is a TraceError naming the line (it would wrap around).
  template <class U>
    requires(rank == 0 && is_integer_v<T> && is_integer_v<U> && !std::is_same_v<U, int> &&
             !detail::integer_lossless_v<U, T>)
  Value(U, refx::source_location = refx::source_location::current()) {  // NOLINT: implicit, to be rejected
    if constexpr (sizeof(T) >= 4 && sizeof(U) > sizeof(T)) {
      static_assert(detail::dependent_false<U>,
                    "refx: an integer wider than 32 bits (std::int64_t, std::size_t) where a 32-bit integer is expected "
                    "(a device id, loop bound, semaphore count or increment, step or index) would be narrowed; convert "
                    "it explicitly with static_cast<std::int32_t>(...)");
    } else if constexpr (sizeof(U) > sizeof(T)) {
      static_assert(detail::dependent_false<U>,
                    "refx: an integer wider than the Scalar's 8-bit element type (i8 or u8) would be narrowed; write "
                    "an int literal (checked while tracing) or convert it explicitly with static_cast<std::int8_t> / "
                    "static_cast<std::uint8_t>(...)");
    } else if constexpr (std::is_unsigned_v<U>) {
      static_assert(detail::dependent_false<U>,
                    "refx: an unsigned integer where a signed integer of the same width is expected (a device id, loop "
                    "bound, semaphore count or increment, step or index) may not fit: a value above the signed "
                    "maximum would become negative; convert it explicitly with static_cast<std::int32_t>(...)");
    } else {
      static_assert(detail::dependent_false<U>,
                    "refx: a signed integer where an unsigned element type (u8, u32) is expected may be negative and "
                    "would wrap around; convert it explicitly with static_cast<std::uint32_t> / "
                    "static_cast<std::uint8_t>(...)");
    }
  }
  template <class U>
    requires(rank == 0 && is_integer_v<T> && std::is_same_v<U, int> && !detail::integer_lossless_v<U, T>)
  Value(U literal, refx::source_location loc = refx::source_location::current())  // NOLINT: implicit, as above
      : Value(detail::literal_as<T>(literal, "of the Scalar it initialises", "at", loc), loc) {}

  /// A bf16 or f16 scalar from a C++ number, rounded to nearest even
  /// (`Scalar<bf16> k = 0.5f`, as JAX's weakly typed literals).
  template <class U>
    requires(rank == 0 && is_half_float_v<T> && std::is_arithmetic_v<U>)
  Value(U literal, refx::source_location loc = refx::source_location::current())  // NOLINT: implicit, as above
      : Value(static_cast<T>(literal), loc) {}

  /// The traced value; checks that the handle belongs to the active trace.
  ValueId id() const {
    detail::Tracer::check_serial(trace_);
    return id_;
  }
  bool valid() const noexcept { return id_ != no_id; }
  Shape shape() const { return detail::Tracer::current().graph().type(id()).shape; }
  TypedShape<E> typed_shape() const { return {shape()}; }
  /// Names the value in printed graphs, DOT files and timelines.
  const Value& name(std::string n) const {
    detail::Tracer::current().graph().set_name(id(), std::move(n));
    return *this;
  }

 private:
  template <class U, class F>
  friend Value<U, F> detail::wrap(ValueId id);
  ValueId id_ = no_id;
  std::uint64_t trace_ = 0;  // the trace that made it (Tracer::serial)
};

/// A traced rank-0 value (device ids, loop indices, offsets).
template <class T>
using Scalar = Value<T, extents<>>;

namespace detail {
template <class T, class E>
Value<T, E> wrap(ValueId id) {
  Value<T, E> v;
  v.id_ = id;
  v.trace_ = Tracer::current_serial();
  return v;
}

template <class T>
inline constexpr bool is_scalar_value_v = false;
template <class T>
inline constexpr bool is_scalar_value_v<Value<T, extents<>>> = true;

template <class T>
struct value_traits {};
template <class T, class E>
struct value_traits<Value<T, E>> {
  using element = T;
  using ext = E;
};

inline ValueId broadcast_to(ValueId scalar, const Shape& shape, SourceLoc loc = {}) {
  std::vector<std::int64_t> attrs{static_cast<std::int64_t>(shape.rank())};
  attrs.insert(attrs.end(), shape.begin(), shape.end());
  const ValueId ins[] = {scalar};
  return Tracer::current(loc).bind1(prim::broadcast, ins, {}, attrs, loc);
}

/// Records a constant of type T, broadcast to `shape` when it has a rank.
template <class T>
ValueId constant(T v, const Shape& shape, SourceLoc loc = {}) {
  auto& t = Tracer::current(loc);
  const std::int64_t bits =
      is_floating_v<T> ? std::bit_cast<std::int64_t>(static_cast<double>(v)) : static_cast<std::int64_t>(v);
  const std::int64_t attrs[] = {static_cast<std::int64_t>(dtype_v<T>), bits};
  const ValueId c = t.bind1(prim::constant, {}, {}, attrs, loc);
  if (shape.rank() == 0) return c;
  return broadcast_to(c, shape, loc);
}

inline ValueId apply(const Primitive& p, std::initializer_list<ValueId> ins, std::span<const std::int64_t> attrs = {},
                     SourceLoc loc = {}) {
  return Tracer::current(loc).bind1(p, std::span(ins.begin(), ins.size()), {}, attrs, loc);
}

/// A C++ number as an element of type T. An integer that T cannot hold is a
/// trace-time error (`what`, at `loc`), not a silent wrap-around. Character
/// types (char, char8_t, char16_t, ...) count as the integer of their width
/// and signedness (std::in_range takes standard integer types only).
template <class T, class U>
T literal_as(U literal, std::string_view what, std::string_view where, SourceLoc loc) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<U> && !std::is_same_v<T, bool> &&
                !std::is_same_v<U, bool>) {
    using S = std::conditional_t<std::is_signed_v<U>, std::make_signed_t<U>, std::make_unsigned_t<U>>;
    const S v = static_cast<S>(literal);
    if (!std::in_range<T>(v))
      throw TraceError(fmt::format("refx: the integer {} does not fit the {} elements {} (it would become {}); use a "
                                   "wider element type or a value in range ({} {})",
                                   v, dtype_v<T>, what, static_cast<T>(v), where, loc));
  }
  return static_cast<T>(literal);
}

/// Turns an operand of a binary op into a value id of element type T.
template <class T, class A>
ValueId operand(const A& a) {
  if constexpr (is_value_v<A>) {
    return a.id();
  } else {
    static_assert(!(std::is_integral_v<T> && is_floating_v<A>),
                  "refx: a floating-point literal with an integer Value would be truncated; write an integer literal "
                  "or use refx::cast");
    return constant<T>(literal_as<T>(a, "it is combined with", "near", Tracer::current().near()), Shape{});
  }
}

template <class A>
struct operand_traits {
  using element = A;  // a literal
  using ext = extents<>;
  static constexpr bool is_value = false;
};
template <class T, class E>
struct operand_traits<Value<T, E>> {
  using element = T;
  using ext = E;
  static constexpr bool is_value = true;
};

template <class A, class B>
concept binary_operands = (is_value_v<A> || is_value_v<B>) &&
                          (is_value_v<A> || is_number_v<A>) && (is_value_v<B> || is_number_v<B>);

template <class A, class B>
using binary_element = std::conditional_t<operand_traits<A>::is_value, typename operand_traits<A>::element,
                                          typename operand_traits<B>::element>;

// A scalar side takes the other side's extents; merge_extents_t is only
// formed when both sides have a rank (std::conditional_t would form it always).
template <class EA, class EB, bool AScalar = EA::rank == 0, bool BScalar = EB::rank == 0>
struct binary_extents_impl {
  using type = merge_extents_t<EA, EB>;
};
template <class EA, class EB, bool BScalar>
struct binary_extents_impl<EA, EB, true, BScalar> {
  using type = EB;
};
template <class EA, class EB>
struct binary_extents_impl<EA, EB, false, true> {
  using type = EA;
};
template <class EA, class EB>
using binary_extents = typename binary_extents_impl<EA, EB>::type;

/// Records `p(a, b)`; a scalar side is broadcast; literals take the Value's type.
template <bool Predicate, class A, class B>
auto binary(const Primitive& p, const A& a, const B& b) {
  using TA = operand_traits<A>;
  using TB = operand_traits<B>;
  using T = binary_element<A, B>;
  if constexpr (TA::is_value && TB::is_value) {
    static_assert(std::is_same_v<typename TA::element, typename TB::element>,
                  "refx: both operands of an arithmetic op must have one element type; convert one with refx::cast<T>(v)");
  }
  using EA = typename TA::ext;
  using EB = typename TB::ext;
  static_assert(EA::rank == EB::rank || EA::rank == 0 || EB::rank == 0,
                "refx: operands of an elementwise op must have equal ranks (or one must be a scalar)");
  if constexpr (EA::rank == EB::rank) {
    static_assert(extents_compatible<EA, EB>, "refx: operands of an elementwise op have different static extents");
  }
  using E = binary_extents<EA, EB>;
  ValueId ia = operand<T>(a), ib = operand<T>(b);
  if constexpr (EA::rank == 0 && EB::rank != 0) ia = broadcast_to(ia, Tracer::current().graph().type(ib).shape);
  if constexpr (EB::rank == 0 && EA::rank != 0) ib = broadcast_to(ib, Tracer::current().graph().type(ia).shape);
  using R = std::conditional_t<Predicate, bool, T>;
  return wrap<R, E>(apply(p, {ia, ib}));
}
}  // namespace detail

// ---- arithmetic, comparison and logic operators
template <class A, class B> requires detail::binary_operands<A, B>
auto operator+(const A& a, const B& b) { return detail::binary<false>(prim::add, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto operator-(const A& a, const B& b) { return detail::binary<false>(prim::sub, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto operator*(const A& a, const B& b) { return detail::binary<false>(prim::mul, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto operator/(const A& a, const B& b) { return detail::binary<false>(prim::div, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto operator%(const A& a, const B& b) {
  static_assert(std::is_integral_v<detail::binary_element<A, B>> && !std::is_same_v<detail::binary_element<A, B>, bool>,
                "refx: % needs integer operands");
  return detail::binary<false>(prim::rem, a, b);
}
template <class A, class B> requires detail::binary_operands<A, B>
auto operator==(const A& a, const B& b) { return detail::binary<true>(prim::eq, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto operator!=(const A& a, const B& b) { return detail::binary<true>(prim::ne, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto operator<(const A& a, const B& b) { return detail::binary<true>(prim::lt, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto operator<=(const A& a, const B& b) { return detail::binary<true>(prim::le, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto operator>(const A& a, const B& b) { return detail::binary<true>(prim::gt, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto operator>=(const A& a, const B& b) { return detail::binary<true>(prim::ge, a, b); }
/// & | ^: logical on bool Values (comparisons), bitwise on integer Values.
template <class A, class B> requires detail::binary_operands<A, B>
auto operator&(const A& a, const B& b) {
  static_assert(std::is_integral_v<detail::binary_element<A, B>>,
                "refx: & | ^ combine bool values (comparisons) or integer values (bitwise), not floating point");
  return detail::binary<false>(prim::logical_and, a, b);
}
template <class A, class B> requires detail::binary_operands<A, B>
auto operator|(const A& a, const B& b) {
  static_assert(std::is_integral_v<detail::binary_element<A, B>>,
                "refx: & | ^ combine bool values (comparisons) or integer values (bitwise), not floating point");
  return detail::binary<false>(prim::logical_or, a, b);
}
template <class A, class B> requires detail::binary_operands<A, B>
auto operator^(const A& a, const B& b) {
  static_assert(std::is_integral_v<detail::binary_element<A, B>>,
                "refx: & | ^ combine bool values (comparisons) or integer values (bitwise), not floating point");
  return detail::binary<false>(prim::logical_xor, a, b);
}

namespace detail {
/// Records a shift of the integer Value side by an integer amount (a Value of
/// the same element type, or a literal that the element type holds).
template <class A, class B>
auto shift(const Primitive& p, const A& a, const B& b) {
  static_assert(is_integer_v<binary_element<A, B>>, "refx: shifts need integer values (bool and floating point have no bits to shift)");
  static_assert(!is_floating_v<A> && !is_floating_v<B>,
                "refx: a shift amount must be an integer; write an integer literal (or an integer Value)");
  return binary<false>(p, a, b);
}
}  // namespace detail

/// XLA's shifts: by the bit width or more, shift_left and shift_right_logical
/// give 0 and shift_right_arithmetic gives 0 or -1 (the sign filled in). The
/// amount is read as unsigned (a negative amount shifts everything out).
template <class A, class B> requires detail::binary_operands<A, B>
auto shift_left(const A& a, const B& b) { return detail::shift(prim::shift_left, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto shift_right_logical(const A& a, const B& b) { return detail::shift(prim::shift_right_logical, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto shift_right_arithmetic(const A& a, const B& b) { return detail::shift(prim::shift_right_arithmetic, a, b); }

/// Elementwise a^b of floating-point values (a literal exponent is allowed).
template <class A, class B> requires detail::binary_operands<A, B>
auto pow(const A& a, const B& b) {
  static_assert(is_floating_v<detail::binary_element<A, B>>, "refx: pow needs floating-point values; cast them first");
  return detail::binary<false>(prim::pow, a, b);
}
/// Elementwise minimum / maximum of two values (or a value and a literal).
template <class A, class B> requires detail::binary_operands<A, B>
auto min(const A& a, const B& b) { return detail::binary<false>(prim::min, a, b); }
template <class A, class B> requires detail::binary_operands<A, B>
auto max(const A& a, const B& b) { return detail::binary<false>(prim::max, a, b); }

template <class T, class E>
Value<T, E> operator-(const Value<T, E>& a) { return detail::wrap<T, E>(detail::apply(prim::neg, {a.id()})); }
template <class E>
Value<bool, E> operator!(const Value<bool, E>& a) { return detail::wrap<bool, E>(detail::apply(prim::logical_not, {a.id()})); }
/// Bitwise not of an integer Value (logical not of a bool one).
template <class T, class E>
Value<T, E> operator~(const Value<T, E>& a) {
  static_assert(std::is_integral_v<T>, "refx: ~ flips the bits of integer values (or negates bool ones), not floating point");
  return detail::wrap<T, E>(detail::apply(prim::logical_not, {a.id()}));
}
template <class T, class E>
Value<T, E> abs(const Value<T, E>& a, refx::source_location loc = refx::source_location::current()) {
  return detail::wrap<T, E>(detail::apply(prim::abs, {a.id()}, {}, loc));
}
template <class T, class E>
Value<T, E> exp(const Value<T, E>& a, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_floating_v<T>, "refx: exp needs a floating-point value; cast it first");
  return detail::wrap<T, E>(detail::apply(prim::exp, {a.id()}, {}, loc));
}
template <class T, class E>
Value<T, E> log(const Value<T, E>& a, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_floating_v<T>, "refx: log needs a floating-point value; cast it first");
  return detail::wrap<T, E>(detail::apply(prim::log, {a.id()}, {}, loc));
}
template <class T, class E>
Value<T, E> sqrt(const Value<T, E>& a, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_floating_v<T>, "refx: sqrt needs a floating-point value; cast it first");
  return detail::wrap<T, E>(detail::apply(prim::sqrt, {a.id()}, {}, loc));
}
/// 1 / sqrt(a).
template <class T, class E>
Value<T, E> rsqrt(const Value<T, E>& a, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_floating_v<T>, "refx: rsqrt needs a floating-point value; cast it first");
  return detail::wrap<T, E>(detail::apply(prim::rsqrt, {a.id()}, {}, loc));
}
template <class T, class E>
Value<T, E> tanh(const Value<T, E>& a, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_floating_v<T>, "refx: tanh needs a floating-point value; cast it first");
  return detail::wrap<T, E>(detail::apply(prim::tanh, {a.id()}, {}, loc));
}
/// The sigmoid 1 / (1 + exp(-a)) (lax.logistic).
template <class T, class E>
Value<T, E> logistic(const Value<T, E>& a, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_floating_v<T>, "refx: logistic needs a floating-point value; cast it first");
  return detail::wrap<T, E>(detail::apply(prim::logistic, {a.id()}, {}, loc));
}

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
    if constexpr (is_value_v<A> && is_value_v<B>) return std::is_same_v<typename A::element_type, typename B::element_type>;
    else return true;
  }();
  static_assert(one_type,
                "refx: select's two alternatives must have one element type; convert one with refx::cast<T>(v)");
  if constexpr (!bool_cond || !one_type) {
    return Value<float>{};  // not reached: a check above failed to compile
  } else {
  using T = detail::binary_element<A, B>;
  using E = detail::binary_extents<typename detail::operand_traits<C>::ext,
                                   detail::binary_extents<typename detail::operand_traits<A>::ext,
                                                          typename detail::operand_traits<B>::ext>>;
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

/// Tag for dot(a, b, trans_b): multiply by b's transpose (`a @ b.T`, as
/// attention scores are written), without materialising it.
struct trans_b_t {
  explicit constexpr trans_b_t() = default;
};
inline constexpr trans_b_t trans_b{};

namespace detail {
template <class Out, class T>
using dot_result_t = std::conditional_t<std::is_void_v<Out>, T, Out>;

template <class Out, bool TransB, class T, class EA, class EB>
auto traced_dot(const Value<T, EA>& a, const Value<T, EB>& b, SourceLoc loc) {
  using R = dot_result_t<Out, T>;
  static_assert(EA::rank == 2 && EB::rank == 2, "refx: dot multiplies two rank-2 values");
  constexpr std::size_t kb = TransB ? 1 : 0;  // b's contracting axis
  static_assert(EA::rank != 2 || EB::rank != 2 || EA::values[1] == dyn || EB::values[kb] == dyn ||
                    EA::values[1] == EB::values[kb],
                "refx: dot's contracting extents differ (a's columns against b's rows, or b's columns with trans_b)");
  static_assert(!std::is_same_v<T, bool>, "refx: dot cannot multiply bool matrices; cast them to a number type first");
  static_assert(std::is_void_v<Out> || Element<Out>, "refx: dot's preferred element type must be a refx element type");
  if constexpr (Element<R> && !std::is_same_v<T, bool>) {
    static_assert(prim::dot_result_fits(dtype_v<T>, dtype_v<R>),
                  "refx: dot's preferred element type must be at least as wide as the operands, and floating for "
                  "floating operands (bf16 x bf16 may prefer float)");
    const std::int64_t attrs[] = {static_cast<std::int64_t>(dtype_v<R>), TransB ? prim::dot_trans_b : 0};
    return wrap<R, extents<EA::values[0], EB::values[TransB ? 0 : 1]>>(apply(prim::dot, {a.id(), b.id()}, attrs, loc));
  }
}
}  // namespace detail

/// Matrix product of (m, k) and (k, n) values. `dot<float>(a, b)` names the
/// result element type (JAX's preferred_element_type; default: the
/// operands'): bf16 x bf16 -> float keeps the f32 sums, unrounded. bf16 and
/// f16 sums are f32 either way; integer results are exact, wrapping.
template <class Out = void, class T, class EA, class EB>
auto dot(const Value<T, EA>& a, const Value<T, EB>& b, refx::source_location loc = refx::source_location::current()) {
  return detail::traced_dot<Out, false>(a, b, loc);
}
/// Matrix product of (m, k) and the transpose of (n, k): `a @ b.T`.
template <class Out = void, class T, class EA, class EB>
auto dot(const Value<T, EA>& a, const Value<T, EB>& b, trans_b_t, refx::source_location loc = refx::source_location::current()) {
  return detail::traced_dot<Out, true>(a, b, loc);
}
/// Operands of two element types: an error that says so. The return type is
/// deduced, so the error shows while the caller's expression is checked (not
/// after a "cannot store void"), and is a Value of the shape the caller
/// expects (nothing further fails to compile).
template <class Out = void, class TA, class TB, class EA, class EB, class... Rest>
  requires(!std::is_same_v<TA, TB>)
auto dot(const Value<TA, EA>&, const Value<TB, EB>&, Rest&&...) {
  static_assert(std::is_same_v<TA, TB>, "refx: dot's operands have different element types; convert one with refx::cast<T>(v)");
  using R = std::conditional_t<std::is_void_v<Out>, TA, Out>;
  constexpr bool trans_b = (std::is_same_v<std::remove_cvref_t<Rest>, trans_b_t> || ...);
  if constexpr (EA::rank == 2 && EB::rank == 2 && Element<R>) {
    return Value<R, extents<EA::values[0], EB::values[trans_b ? 0 : 1]>>{};
  }
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
Value<T, E> zeros(TypedShape<E> s, refx::source_location loc = refx::source_location::current()) { return full<T>(s, T{}, loc); }
template <Element T, std::int64_t... Dims>
Value<T, extents<Dims...>> zeros(refx::source_location loc = refx::source_location::current()) { return full<T, Dims...>(T{}, loc); }

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
Value<T, E> broadcast(const Scalar<T>& v, TypedShape<E> s, refx::source_location loc = refx::source_location::current()) {
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
