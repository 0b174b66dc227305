#pragma once
// A Ref where a Value is expected: the Value operations' catch-alls for Ref
// operands, each a refx: error that says to load() first; and the free
// load / store / accum, which take a Ref and say so when given a Value.
// Part of trace/ref.hpp, which includes it at its end (so it includes nothing back).

namespace refx {

// A Ref given where a Value is needed (exp(x) for exp(x.load())): each Value
// operation has a catch-all for Ref operands that says so, instead of "no
// matching function". It returns a Value of the Ref's type, so nothing after
// it fails again.
namespace detail {
template <class R>
struct loaded {
  using type = Scalar<float>;
};
template <class R>
  requires(is_ref_v<R> && requires { typename R::value_type; })
struct loaded<R> {
  using type = Value<typename R::value_type, typename R::extents_type>;
};
template <class R>
using loaded_t = typename loaded<std::remove_cvref_t<R>>::type;
template <class A, class B>
concept ref_operands = (is_ref_v<A> || is_ref_v<B>) && (is_ref_v<A> || is_value_v<A> || is_number_v<A>) &&
                       (is_ref_v<B> || is_value_v<B> || is_number_v<B>);
template <class A, class B>
using ref_operand_result_t = loaded_t<std::conditional_t<is_ref_v<A>, A, B>>;
}  // namespace detail

template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> exp(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: exp takes a Value, not a Ref; read the Ref first: exp(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> log(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: log takes a Value, not a Ref; read the Ref first: log(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> sqrt(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: sqrt takes a Value, not a Ref; read the Ref first: sqrt(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> rsqrt(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>,
                "refx: rsqrt takes a Value, not a Ref; read the Ref first: rsqrt(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> tanh(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: tanh takes a Value, not a Ref; read the Ref first: tanh(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> logistic(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>,
                "refx: logistic takes a Value, not a Ref; read the Ref first: logistic(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> abs(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: abs takes a Value, not a Ref; read the Ref first: abs(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> transpose(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>,
                "refx: transpose takes a Value, not a Ref; read the Ref first: transpose(x.load())");
  return {};
}
template <std::size_t Axis, class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> reduce_sum(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>,
                "refx: reduce_sum takes a Value, not a Ref; read the Ref first: reduce_sum<axis>(x.load())");
  return {};
}
template <std::size_t Axis, class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> reduce_max(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>,
                "refx: reduce_max takes a Value, not a Ref; read the Ref first: reduce_max<axis>(x.load())");
  return {};
}
template <std::size_t Axis, class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> reduce_min(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>,
                "refx: reduce_min takes a Value, not a Ref; read the Ref first: reduce_min<axis>(x.load())");
  return {};
}
template <class U, class R, class... Rest>
  requires is_ref_v<R>
Value<U, typename detail::loaded_t<R>::extents_type> cast(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>,
                "refx: cast converts a Value, not a Ref; read the Ref first: cast<T>(x.load()) (to reinterpret a Ref's "
                "bytes, use x.bitcast<T>())");
  return {};
}
template <class A, class B, class... Rest>
  requires(is_ref_v<A> || is_ref_v<B>)
detail::ref_operand_result_t<A, B> dot(const A&, const B&, Rest&&...) {
  static_assert(detail::dependent_false<A>,
                "refx: dot multiplies Values, not Refs; read the Refs first: dot(a.load(), b.load())");
  return {};
}
template <class C, class A, class B, class... Rest>
  requires(is_ref_v<C> || is_ref_v<A> || is_ref_v<B>)
auto select(const C&, const A&, const B&, Rest&&...) {
  static_assert(detail::dependent_false<C>,
                "refx: select takes Values (a bool condition and two alternatives), not Refs; read the Refs first: "
                "select(c, x.load(), y.load())");
  if constexpr (is_ref_v<A>) return detail::loaded_t<A>{};
  else if constexpr (is_ref_v<B>) return detail::loaded_t<B>{};
  else return detail::loaded_t<C>{};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator+(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator-(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator*(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator/(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator%(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator&(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator|(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator^(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator<(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator<=(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator>(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator>=(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator==(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator!=(const A&, const B&) {
  static_assert(
      detail::dependent_false<A>,
      "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}

/// Free-function spellings of the Ref operations (as in Pallas' ref_get / ref_set).
template <class R>
auto load(const R& ref, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_ref_v<R>,
                "refx: expected a Ref here but got something else (a Value is immutable; "
                "store it into a Ref first)");
  if constexpr (is_ref_v<R>) return ref.load(loc);
}
template <class R, class V>
void store(const R& ref, const V& v, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_ref_v<R>,
                "refx: expected a Ref here but got something else (a Value is immutable; "
                "store it into a Ref first)");
  if constexpr (is_ref_v<R>) ref.store(detail::StoreArg<typename R::element_type, typename R::extents_type>(v, loc));
}
template <class R, class V>
void accum(const R& ref, const V& v, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_ref_v<R>,
                "refx: expected a Ref here but got something else (a Value is immutable; "
                "store it into a Ref first)");
  if constexpr (is_ref_v<R>) ref.accum(detail::StoreArg<typename R::element_type, typename R::extents_type>(v, loc));
}

}  // namespace refx
