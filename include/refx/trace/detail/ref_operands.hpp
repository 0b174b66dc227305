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

// One catch-all per name; a static_assert message must be a string literal,
// so the name is spliced in by the preprocessor (#name). The messages are
// quoted by docs/diagnostics.md and matched by tests/compile_fail/.
#define REFX_REF_CATCH_ALL_CALLED(name, call, ...) /* ...: template parameters before R */      \
  template <__VA_ARGS__ class R, class... Rest>                                                 \
    requires is_ref_v<R>                                                                        \
  detail::loaded_t<R> name(const R&, Rest&&...) {                                               \
    static_assert(detail::dependent_false<R>,                                                   \
                  "refx: " #name " takes a Value, not a Ref; read the Ref first: " #name call); \
    return {};                                                                                  \
  }
#define REFX_REF_CATCH_ALL(name) REFX_REF_CATCH_ALL_CALLED(name, "(x.load())", )
#define REFX_REF_CATCH_ALL_AXIS(name) REFX_REF_CATCH_ALL_CALLED(name, "<axis>(x.load())", auto Axis, )
#define REFX_REF_CATCH_ALL_BINARY(name)                                                                  \
  template <class A, class B>                                                                            \
    requires detail::ref_operands<A, B>                                                                  \
  detail::ref_operand_result_t<A, B> name(const A&, const B&) {                                          \
    static_assert(detail::dependent_false<A>,                                                            \
                  "refx: " #name " takes Values, not Refs; read the Ref first: " #name "(x.load(), y)"); \
    return {};                                                                                           \
  }
#define REFX_REF_CATCH_ALL_OPERATOR(op)                                                                           \
  template <class A, class B>                                                                                     \
    requires detail::ref_operands<A, B>                                                                           \
  detail::ref_operand_result_t<A, B> operator op(const A&, const B&) {                                            \
    static_assert(detail::dependent_false<A>,                                                                     \
                  "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. " \
                  "x.load() + 1.0f");                                                                             \
    return {};                                                                                                    \
  }

REFX_REF_CATCH_ALL(exp)
REFX_REF_CATCH_ALL(log)
REFX_REF_CATCH_ALL(sqrt)
REFX_REF_CATCH_ALL(rsqrt)
REFX_REF_CATCH_ALL(tanh)
REFX_REF_CATCH_ALL(logistic)
REFX_REF_CATCH_ALL(abs)
REFX_REF_CATCH_ALL(transpose)
REFX_REF_CATCH_ALL_AXIS(reduce_sum)
REFX_REF_CATCH_ALL_AXIS(reduce_max)
REFX_REF_CATCH_ALL_AXIS(reduce_min)
REFX_REF_CATCH_ALL_BINARY(min)
REFX_REF_CATCH_ALL_BINARY(max)
REFX_REF_CATCH_ALL_BINARY(pow)

// expand_dims and broadcast_to change the rank: their catch-alls return the
// Value the call would have made, so the expression around them checks.
template <auto Axis, class R, class... Rest>
  requires is_ref_v<R>
auto expand_dims(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>,
                "refx: expand_dims takes a Value, not a Ref; read the Ref first: expand_dims<axis>(x.load())");
  return expand_dims<Axis>(detail::loaded_t<R>{});
}
template <std::int64_t... Dims, class R, class... Rest>
  requires is_ref_v<R>
Value<typename detail::loaded_t<R>::element_type, extents<Dims...>> broadcast_to(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>,
                "refx: broadcast_to takes a Value, not a Ref; read the Ref first: broadcast_to<Dims...>(x.load())");
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

REFX_REF_CATCH_ALL_OPERATOR(+)
REFX_REF_CATCH_ALL_OPERATOR(-)
REFX_REF_CATCH_ALL_OPERATOR(*)
REFX_REF_CATCH_ALL_OPERATOR(/)
REFX_REF_CATCH_ALL_OPERATOR(%)
REFX_REF_CATCH_ALL_OPERATOR(&)
REFX_REF_CATCH_ALL_OPERATOR(|)
REFX_REF_CATCH_ALL_OPERATOR(^)
REFX_REF_CATCH_ALL_OPERATOR(<)
REFX_REF_CATCH_ALL_OPERATOR(<=)
REFX_REF_CATCH_ALL_OPERATOR(>)
REFX_REF_CATCH_ALL_OPERATOR(>=)
REFX_REF_CATCH_ALL_OPERATOR(==)
REFX_REF_CATCH_ALL_OPERATOR(!=)
#undef REFX_REF_CATCH_ALL_CALLED
#undef REFX_REF_CATCH_ALL
#undef REFX_REF_CATCH_ALL_AXIS
#undef REFX_REF_CATCH_ALL_BINARY
#undef REFX_REF_CATCH_ALL_OPERATOR

namespace detail {
/// True for a Ref; otherwise a refx: error (load / store / accum given a Value).
template <class R>
constexpr bool expect_ref() {
  static_assert(is_ref_v<R>,
                "refx: expected a Ref here but got something else (a Value is immutable; "
                "store it into a Ref first)");
  return is_ref_v<R>;
}
}  // namespace detail

/// Free-function spellings of the Ref operations (as in Pallas' ref_get / ref_set).
template <class R>
auto load(const R& ref, refx::source_location loc = refx::source_location::current()) {
  if constexpr (detail::expect_ref<R>()) return ref.load(loc);
}
template <class R, class V>
void store(const R& ref, const V& v, refx::source_location loc = refx::source_location::current()) {
  if constexpr (detail::expect_ref<R>())
    ref.store(detail::StoreArg<typename R::element_type, typename R::extents_type>(v, loc));
}
template <class R, class V>
void accum(const R& ref, const V& v, refx::source_location loc = refx::source_location::current()) {
  if constexpr (detail::expect_ref<R>())
    ref.accum(detail::StoreArg<typename R::element_type, typename R::extents_type>(v, loc));
}

}  // namespace refx
