#pragma once
// dot on Values: the matrix product of two rank-2 Values (optionally by the
// second's transpose, trans_b), with JAX's preferred element type, and the
// error for operands of two element types. Part of trace/value.hpp, which
// includes it at its end after value_ops.hpp (so it includes nothing back).

namespace refx {

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
auto dot(const Value<T, EA>& a, const Value<T, EB>& b, trans_b_t,
         refx::source_location loc = refx::source_location::current()) {
  return detail::traced_dot<Out, true>(a, b, loc);
}
/// Operands of two element types: an error that says so. The return type is
/// deduced, so the error shows while the caller's expression is checked (not
/// after a "cannot store void"), and is a Value of the shape the caller
/// expects (nothing further fails to compile).
template <class Out = void, class TA, class TB, class EA, class EB, class... Rest>
  requires(!std::is_same_v<TA, TB>)
auto dot(const Value<TA, EA>&, const Value<TB, EB>&, Rest&&...) {
  static_assert(std::is_same_v<TA, TB>,
                "refx: dot's operands have different element types; convert one with refx::cast<T>(v)");
  using R = std::conditional_t<std::is_void_v<Out>, TA, Out>;
  constexpr bool trans_b = (std::is_same_v<std::remove_cvref_t<Rest>, trans_b_t> || ...);
  if constexpr (EA::rank == 2 && EB::rank == 2 && Element<R>) {
    return Value<R, extents<EA::values[0], EB::values[trans_b ? 0 : 1]>>{};
  }
}

}  // namespace refx
