#pragma once
// Traced control flow. Plain C++ loops unroll at trace time; these record one
// node whose body is traced once:
//   fori_loop(lo, hi, body)              body(Scalar<int32_t> i)
//   fori_loop(lo, hi, body, carry)       body(i, carry) -> carry
//   when(cond, body)                     body() runs where cond is true

#include <refx/core/source_location.hpp>

#include <refx/ir/primitives/builtins.hpp>
#include <refx/trace/detail/params.hpp>
#include <refx/trace/detail/results.hpp>

namespace refx {

namespace detail {
template <class F, class C>
std::span<const ValueId> trace_loop(const Scalar<std::int32_t>& lo, const Scalar<std::int32_t>& hi, F& body,
                                    const C* carry, SourceLoc loc) {
  Tracer& t = Tracer::current(loc);
  t.note(loc);
  std::vector<ValueId> ins{lo.id(), hi.id()};
  if constexpr (!std::is_void_v<C>) results<C>::ids(*carry, ins);
  for (ValueId v : ins) t.check_value(v, loc);
  const BlockId block = t.open_block();
  const auto i = wrap<std::int32_t, extents<>>(t.add_param(t.graph().type(lo.id()), 0));
  const LoopBody open_loop(t, block, i.id());
  std::vector<ValueId> out;
  if constexpr (std::is_void_v<C>) {
    using R = std::invoke_result_t<F&, Scalar<std::int32_t>>;
    static_assert(!returns_ref<R>, "refx: a fori_loop body must not return a Ref (or anything holding one)");
    static_assert(std::is_void_v<R> || returns_ref<R>,
                  "refx: a fori_loop body without a carry returns nothing; pass a carry to return values");
    body(i);
  } else {
    using R = std::invoke_result_t<F&, Scalar<std::int32_t>, C>;
    static_assert(!returns_ref<R>, "refx: a fori_loop body must not return a Ref (or anything holding one)");
    static_assert(std::is_same_v<R, C> || returns_ref<R>, "refx: a fori_loop body must return its carry's type");
    if constexpr (std::is_same_v<R, C>) {
      std::vector<ValueId> params;
      for (std::size_t k = 2; k < ins.size(); ++k) params.push_back(t.add_param(t.graph().type(ins[k]), 0));
      results<C>::ids(body(i, results<C>::rebuild(params)), out);
      for (std::size_t k = 0; k < out.size(); ++k) {
        t.check_value(out[k], loc);
        if (!(t.graph().type(out[k]) == t.graph().type(params[k])))
          trace_error(loc, "fori_loop carry {} changes type from {}{} to {}{}", k, t.graph().type(params[k]).dtype,
                      t.graph().type(params[k]).shape, t.graph().type(out[k]).dtype, t.graph().type(out[k]).shape);
      }
    }  // else: a check above failed to compile
  }
  t.graph().mutable_block(block).results = out;
  t.close_block(block);
  const auto types = types_of<void>(t.graph(), out);
  const BlockId bodies[] = {block};
  return t.record(prim::fori_loop, ins, {}, {}, types, {}, bodies, loc);
}
}  // namespace detail

/// Runs body(i) for i in [lo, hi), traced once into a loop node. (`auto`: a
/// deduced return type makes the compiler instantiate the body, and its
/// sentence about the loop body, before the bounds' conversions and theirs.)
template <class F>
auto fori_loop(const Scalar<std::int32_t>& lo, const Scalar<std::int32_t>& hi, F&& body,
               refx::source_location loc = refx::source_location::current()) {
  constexpr bool ok = std::is_invocable_v<F&, Scalar<std::int32_t>>;
  static_assert(
      ok,
      "refx: a fori_loop body takes the loop index as a Scalar: [&](refx::Scalar<std::int32_t> i) { ... } "
      "(with a carry, fori_loop(lo, hi, body, carry) and [&](Scalar<std::int32_t> i, C carry) { return ...; })");
  if constexpr (ok) detail::trace_loop<F, void>(lo, hi, body, nullptr, loc);
}

/// carry = body(i, carry) for i in [lo, hi); returns the final carry.
template <class F, class C>
  requires(detail::results<C>::supported && !std::is_void_v<C>)
auto fori_loop(const Scalar<std::int32_t>& lo, const Scalar<std::int32_t>& hi, F&& body, const C& carry,
               refx::source_location loc = refx::source_location::current()) {
  constexpr bool ok = std::is_invocable_v<F&, Scalar<std::int32_t>, C>;
  static_assert(ok,
                "refx: a fori_loop body with a carry takes the index and the carry and returns the new carry: "
                "[&](refx::Scalar<std::int32_t> i, C carry) { return ...; }");
  if constexpr (ok) {
    return detail::results<C>::rebuild(detail::trace_loop<F, C>(lo, hi, body, &carry, loc));
  } else {
    return carry;
  }
}

/// A Ref as the carry: one sentence instead of "no matching function".
template <class F, class C>
  requires(is_ref_v<C> || detail::contains_ref<C>::value)
void fori_loop(const Scalar<std::int32_t>&, const Scalar<std::int32_t>&, F&&, const C&,
               refx::source_location = refx::source_location::current()) {
  static_assert(detail::dependent_false<C>,
                "refx: a fori_loop carry holds Values, not Refs: a Ref is not carried, the body writes it directly "
                "(its writes persist across iterations); to carry its contents, pass x.load() and store the result "
                "after the loop");
}

/// Bounds that are not integers (a lambda given first, a Ref, a Value of
/// another rank): one sentence instead of "no matching function".
template <class Lo, class Hi, class F, class... Rest>
  requires(!std::is_convertible_v<const Lo&, Scalar<std::int32_t>> ||
           !std::is_convertible_v<const Hi&, Scalar<std::int32_t>>)
void fori_loop(const Lo&, const Hi&, F&&, Rest&&...) {
  static_assert(detail::dependent_false<Lo>,
                "refx: fori_loop(lo, hi, body[, carry]) takes the bounds first, as integers or Scalar<std::int32_t> "
                "values, then the body");
}

/// Runs body() on devices / iterations where `cond` is true.
template <class F>
void when(const Scalar<bool>& cond, F&& body, refx::source_location loc = refx::source_location::current()) {
  constexpr bool ok = std::is_invocable_v<F&>;
  static_assert(ok, "refx: when's body is a callable taking no arguments: when(cond, [&] { ... })");
  if constexpr (ok) {
    using R = std::invoke_result_t<F&>;
    static_assert(!detail::returns_ref<R>, "refx: a when body must not return a Ref (or anything holding one)");
    static_assert(std::is_void_v<R>, "refx: a when body returns nothing; write results into Refs");
    auto& t = detail::Tracer::current(loc);
    t.note(loc);
    t.check_value(cond.id(), loc);
    const BlockId block = t.open_block();
    body();
    t.close_block(block);
    const ValueId ins[] = {cond.id()};
    const BlockId bodies[] = {block};
    t.record(prim::when, ins, {}, {}, {}, {}, bodies, loc);
  }
}

/// A condition that is not a bool Scalar: one sentence instead of "no
/// matching function".
template <class C, class F>
  requires(!std::is_convertible_v<const C&, Scalar<bool>>)
void when(const C&, F&&) {
  static_assert(detail::dependent_false<C>,
                "refx: when's condition is a bool Scalar, a comparison such as i == 0 or axis_index(\"x\") == 0; "
                "compare an integer with == or !=, and reduce a bool vector (or use select) first");
}

}  // namespace refx
