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
#include <refx/ir/regions.hpp>  // footprint_is_dense (detail::reshape_rewrites_to)
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
  /// not (an unsigned integer into a signed element type of its width or
  /// narrower, a signed one into an unsigned element type, a wider one into an
  /// 8-bit element type). The exceptions (detail::integer_range_checked_v) are
  /// `int`, the type of an integer literal (`Scalar<std::uint32_t> m = 0xFF`,
  /// `Scalar<std::int8_t> k = 1`), and a std::int64_t where a 32-bit integer is
  /// expected (`fori_loop(0, kRows, body)` with `constexpr std::int64_t kRows`):
  /// they compile, and a value the element type cannot hold is a TraceError
  /// naming the line (it would wrap around).
  template <class U>
    requires(rank == 0 && is_integer_v<T> && is_integer_v<U> && !detail::integer_range_checked_v<U, T> &&
             !detail::integer_lossless_v<U, T>)
  Value(U, refx::source_location = refx::source_location::current()) {  // NOLINT: implicit, to be rejected
    if constexpr (std::is_signed_v<U> && std::is_unsigned_v<T>) {
      static_assert(detail::dependent_false<U>,
                    "refx: a signed integer where an unsigned element type (u8, u32) is expected may be negative and "
                    "would wrap around; convert it explicitly with static_cast<std::uint32_t> / "
                    "static_cast<std::uint8_t>(...)");
    } else if constexpr (sizeof(T) >= 4 && sizeof(U) > sizeof(T)) {
      static_assert(
          detail::dependent_false<U>,
          "refx: an unsigned 64-bit integer (std::size_t, std::uint64_t) where a 32-bit integer is expected (a "
          "device id, loop bound, semaphore count or increment, step or index) may not fit; convert it explicitly "
          "with static_cast<std::int32_t>(...) (a std::int64_t converts, and is checked while tracing)");
    } else if constexpr (sizeof(U) > sizeof(T)) {
      static_assert(detail::dependent_false<U>,
                    "refx: an integer wider than the Scalar's 8-bit element type (i8 or u8) would be narrowed; write "
                    "an int literal (checked while tracing) or convert it explicitly with static_cast<std::int8_t> / "
                    "static_cast<std::uint8_t>(...)");
    } else {
      static_assert(detail::dependent_false<U>,
                    "refx: an unsigned integer where a signed integer of the same width is expected (a device id, loop "
                    "bound, semaphore count or increment, step or index) may not fit: a value above the signed "
                    "maximum would become negative; convert it explicitly with static_cast<std::int32_t>(...)");
    }
  }
  template <class U>
    requires(rank == 0 && is_integer_v<T> && is_integer_v<U> && detail::integer_range_checked_v<U, T> &&
             !detail::integer_lossless_v<U, T>)
  Value(U literal, refx::source_location loc = refx::source_location::current())  // NOLINT: implicit, as above
      : Value(detail::literal_as<T>(literal, "of the Scalar it initialises", "at", loc), loc) {}

  /// A traced Scalar of another element type where an integer Scalar is
  /// expected (a Scalar<std::int64_t> semaphore count or loop bound): rejected
  /// with one sentence instead of "no matching function"; traced values
  /// change type only through refx::cast.
  template <class U>
    requires(rank == 0 && is_integer_v<T> && !std::is_same_v<U, T>)
  Value(const Value<U, extents<>>&, refx::source_location = refx::source_location::current()) {  // NOLINT: implicit
    static_assert(detail::dependent_false<U>,
                  "refx: a traced Scalar of another element type where an integer Scalar is expected (a "
                  "Scalar<std::int32_t> device id, loop bound, semaphore count or increment, step or index) does not "
                  "convert implicitly; convert it with refx::cast<std::int32_t>(s)");
  }

  /// A bf16, f16 or f8 scalar from a C++ number, rounded to nearest even
  /// (`Scalar<bf16> k = 0.5f`, as JAX's weakly typed literals).
  template <class U>
    requires(rank == 0 && is_narrow_float_v<T> && std::is_arithmetic_v<U>)
  Value(U literal, refx::source_location loc = refx::source_location::current())  // NOLINT: implicit, as above
      : Value(static_cast<T>(literal), loc) {}

  /// A traced value as a C++ condition (`if (k_i == 3)`, `for (...; i < n;
  /// ...)`, `?:`, `&&`, `||`): rejected with one sentence instead of "could
  /// not convert Value<bool> to bool". Explicit and for bool only, so no
  /// implicit or other conversion changes.
  template <class B>
    requires std::same_as<B, bool>
  explicit operator B() const {
    static_assert(detail::dependent_false<B>,
                  "refx: a traced value has no value while the kernel is traced, so it cannot steer C++ control "
                  "flow (if, for, while, ?:, &&, ||); branch with when(cond, [&] { ... }) or cond(pred, then_fn, "
                  "else_fn), loop with fori_loop(lo, hi, [&](Scalar<std::int32_t> i) { ... }), choose between values "
                  "with select(cond, a, b), and combine conditions with & and |; a mesh axis's size as a C++ integer "
                  "is mesh_axis_size(\"x\")");
    return false;
  }

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
/// A class derived from a Value (ref[i]'s element, trace/ref.hpp): its
/// traits are its Value's.
template <class A>
inline constexpr bool is_derived_value_v = false;
template <class A>
  requires(is_value_v<A> && requires { typename A::extents_type; })
inline constexpr bool is_derived_value_v<A> =
    !std::is_same_v<A, Value<typename A::element_type, typename A::extents_type>>;
template <class A>
  requires is_derived_value_v<A>
struct value_traits<A> : value_traits<Value<typename A::element_type, typename A::extents_type>> {};
template <class A>
  requires is_derived_value_v<A>
inline constexpr bool is_scalar_value_v<A> = A::extents_type::rank == 0;

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
    if (!std::in_range<T>(v)) {
      const Hint h = hint("use a wider element type or a value in range");
      throw TraceError(detail::located_message_where(
          where, loc, &h, "the integer {} does not fit the {} elements {}: it would become {}", v, dtype_v<T>, what,
          static_cast<T>(v)));
    }
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
template <class A>
  requires is_derived_value_v<A>
struct operand_traits<A> : operand_traits<Value<typename A::element_type, typename A::extents_type>> {};

template <class A, class B>
concept binary_operands = (is_value_v<A> || is_value_v<B>) && (is_value_v<A> || is_number_v<A>) &&
                          (is_value_v<B> || is_number_v<B>);

template <class A, class B>
using binary_element = std::conditional_t<operand_traits<A>::is_value, typename operand_traits<A>::element,
                                          typename operand_traits<B>::element>;

/// Broadcasts the values `ids` to one shape, in place, as lax does after
/// explicit rank alignment: scalars stretch to the others' shape, and so do
/// dimensions of extent 1; the other values must agree. A TraceError
/// naming `what` (the op) at `loc` (or near the last traced line) otherwise.
REFX_DECL void broadcast_operands(std::span<ValueId> ids, std::string_view what, SourceLoc loc);

/// Whether every element of `v` is the constant `x`: a constant, or a
/// broadcast of one.
inline bool is_constant_of(const Graph& g, ValueId v, double x) {
  for (;;) {
    const ValueInfo& info = g.value(v);
    if (info.producer == no_id) return false;
    const Op& op = g.op(info.producer);
    if (op.prim == &prim::broadcast) {
      v = g.inputs(op)[0];
      continue;
    }
    if (op.prim != &prim::constant) return false;
    const prim::ConstantAttrs a = prim::constant_attrs(g, op);
    return is_floating(a.dtype) ? std::bit_cast<double>(a.bits) == x : static_cast<double>(a.bits) == x;
  }
}
/// Whether a value of shape `from` stretches to `to` (equal, a scalar, or
/// extent-1 dimensions where `to` has more).
inline bool stretches_to(const Shape& from, const Shape& to) {
  if (from.rank() == 0) return true;
  if (from.rank() != to.rank()) return false;
  for (std::size_t d = 0; d < to.rank(); ++d)
    if (from[d] != to[d] && from[d] != 1) return false;
  return true;
}
/// The operand `p(ids[0], ids[1])` rewrites to, or no_id: a multiply by
/// ones is its other operand when that has the result's shape. Every bit is
/// the unrewritten product's (x * 1 is x exactly, -0 and infinities
/// included), a signaling NaN aside, which the multiply would quiet.
inline ValueId binary_rewrites_to(const Primitive& p, std::span<const ValueId> ids) {
  if (&p != &prim::mul) return no_id;
  const Graph& g = Tracer::current().graph();
  for (std::size_t k = 0; k < 2; ++k)
    if (is_constant_of(g, ids[1 - k], 1.0) && stretches_to(g.type(ids[1 - k]).shape, g.type(ids[k]).shape))
      return ids[k];
  return no_id;
}

/// Records `p(a, b)`; the operands broadcast (a scalar side, and extent-1
/// dimensions, stretch to the other side); literals take the Value's type.
/// A multiply by ones records nothing (binary_rewrites_to).
template <bool Predicate, class A, class B>
auto binary(const Primitive& p, const A& a, const B& b) {
  using TA = operand_traits<A>;
  using TB = operand_traits<B>;
  using T = binary_element<A, B>;
  if constexpr (TA::is_value && TB::is_value) {
    // f32 with f64: usually C++ double literals that no Value gave a type.
    if constexpr (std::is_floating_point_v<typename TA::element> && std::is_floating_point_v<typename TB::element>) {
      static_assert(
          std::is_same_v<typename TA::element, typename TB::element>,
          "refx: both operands of an arithmetic op must have one element type; convert one with "
          "refx::cast<T>(v) (an f64 Value among f32 ones is usually made of C++ double literals that no "
          "Value gave a type, as in select(c, 0.0, -1e30): write float literals, 0.0f, or Scalar<float>(...))");
    } else {
      static_assert(
          std::is_same_v<typename TA::element, typename TB::element>,
          "refx: both operands of an arithmetic op must have one element type; convert one with refx::cast<T>(v)");
    }
  }
  using EA = typename TA::ext;
  using EB = typename TB::ext;
  static_assert(EA::rank == EB::rank || EA::rank == 0 || EB::rank == 0,
                "refx: operands of an elementwise op must have equal ranks (or one must be a scalar); give the "
                "lower-rank one its missing dimensions of extent 1 with expand_dims<Axis>(v) or reshape<...>(v): "
                "as in lax, no leading dimension is added implicitly");
  if constexpr (EA::rank == EB::rank) {
    static_assert(extents_broadcast<EA, EB>,
                  "refx: operands of an elementwise op have static extents that do not broadcast: each dimension "
                  "must be equal on both sides, or 1 on one side");
  }
  using E = broadcast_extents_t<EA, EB>;
  ValueId ids[] = {operand<T>(a), operand<T>(b)};
  broadcast_operands(ids, p.name, {});
  using R = std::conditional_t<Predicate, bool, T>;
  if constexpr (!Predicate)
    if (const ValueId same = binary_rewrites_to(p, ids); same != no_id) return wrap<R, E>(same);
  return wrap<R, E>(apply(p, {ids[0], ids[1]}));
}
}  // namespace detail

// ---- arithmetic, comparison and logic operators
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator+(const A& a, const B& b) {
  return detail::binary<false>(prim::add, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator-(const A& a, const B& b) {
  return detail::binary<false>(prim::sub, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator*(const A& a, const B& b) {
  return detail::binary<false>(prim::mul, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator/(const A& a, const B& b) {
  return detail::binary<false>(prim::div, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator%(const A& a, const B& b) {
  static_assert(std::is_integral_v<detail::binary_element<A, B>> && !std::is_same_v<detail::binary_element<A, B>, bool>,
                "refx: % needs integer operands");
  return detail::binary<false>(prim::rem, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator==(const A& a, const B& b) {
  return detail::binary<true>(prim::eq, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator!=(const A& a, const B& b) {
  return detail::binary<true>(prim::ne, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator<(const A& a, const B& b) {
  return detail::binary<true>(prim::lt, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator<=(const A& a, const B& b) {
  return detail::binary<true>(prim::le, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator>(const A& a, const B& b) {
  return detail::binary<true>(prim::gt, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator>=(const A& a, const B& b) {
  return detail::binary<true>(prim::ge, a, b);
}
/// & | ^: logical on bool Values (comparisons), bitwise on integer Values.
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator&(const A& a, const B& b) {
  static_assert(std::is_integral_v<detail::binary_element<A, B>>,
                "refx: & | ^ combine bool values (comparisons) or integer values (bitwise), not floating point");
  return detail::binary<false>(prim::logical_and, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator|(const A& a, const B& b) {
  static_assert(std::is_integral_v<detail::binary_element<A, B>>,
                "refx: & | ^ combine bool values (comparisons) or integer values (bitwise), not floating point");
  return detail::binary<false>(prim::logical_or, a, b);
}
template <class A, class B>
  requires detail::binary_operands<A, B>
auto operator^(const A& a, const B& b) {
  static_assert(std::is_integral_v<detail::binary_element<A, B>>,
                "refx: & | ^ combine bool values (comparisons) or integer values (bitwise), not floating point");
  return detail::binary<false>(prim::logical_xor, a, b);
}

namespace detail {
/// Records a shift of the integer Value side by an integer amount (a Value of
/// the same element type, or a literal that the element type holds).
/// The amount's kind is checked before the operands' element types agree, so
/// `v << 2.0f` and a shift by an f32 Value both get the sentence about the
/// amount.
template <class A, class B>
auto shift(const Primitive& p, const A& a, const B& b) {
  constexpr bool shifted_int = is_integer_v<binary_element<A, B>>;
  constexpr bool amount_int = is_integer_v<typename operand_traits<B>::element>;
  static_assert(shifted_int, "refx: shifts need integer values (bool and floating point have no bits to shift)");
  static_assert(!shifted_int || amount_int,
                "refx: a shift amount must be an integer; write an integer literal (or an integer Value)");
  if constexpr (shifted_int && amount_int) return binary<false>(p, a, b);
}
}  // namespace detail

}  // namespace refx

// The named operations on Values, kept apart to keep this header short.
#include <refx/trace/detail/value_ops.hpp>
#include <refx/trace/detail/value_dot.hpp>
