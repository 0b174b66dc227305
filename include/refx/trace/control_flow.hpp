#pragma once
// Traced control flow. Plain C++ loops unroll at trace time; these record one
// node whose body is traced once:
//   fori_loop(lo, hi, body)              body(Scalar<int32_t> i)
//   fori_loop(lo, hi, body, carry)       body(i, carry) -> carry
//   when(cond, body)                     body() runs where cond is true
//   when(cond, body, otherwise)          ... and otherwise() where it is false
//   cond(pred, then_fn, else_fn)         the taken branch's results (lax.cond)
//   switch_(index, f0, f1, ...)          f_index()'s results, index clamped (lax.switch)

#include <type_traits>
#include <vector>

#include <refx/core/source_location.hpp>

#include <refx/ir/primitives/builtins.hpp>
#include <refx/trace/detail/params.hpp>
#include <refx/trace/detail/results.hpp>
#include <refx/trace/value.hpp>

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
    static_assert(std::is_void_v<R>,
                  "refx: a when body returns nothing; for a result, write cond(pred, then_fn, else_fn) (Pallas' "
                  "lax.cond), or write it into a Ref");
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

namespace detail {
/// Traces `branch` into a new block of the current trace; its results (void,
/// a Value or a tuple of Values) become the block's results.
template <class R, class F>
BlockId trace_branch(Tracer& t, F& branch, std::vector<ValueId>& out, SourceLoc loc) {
  const BlockId block = t.open_block();
  if constexpr (std::is_void_v<R>) branch();
  else results<R>::ids(branch(), out);
  for (ValueId v : out) t.check_value(v, loc);
  t.graph().mutable_block(block).results = out;
  t.close_block(block);
  return block;
}

template <class Then, class Else>
constexpr bool check_cond() {
  constexpr bool callable = std::is_invocable_v<Then&> && std::is_invocable_v<Else&>;
  static_assert(callable,
                "refx: cond's branches are callables taking no arguments: cond(pred, [&] { return a; }, [&] { return "
                "b; })");
  if constexpr (callable) {
    using A = std::invoke_result_t<Then&>;
    using B = std::invoke_result_t<Else&>;
    static_assert(!returns_ref<A> && !returns_ref<B>,
                  "refx: a cond branch must not return a Ref (or anything holding one); return Values, or write "
                  "into the Ref inside the branch");
    static_assert(returns_ref<A> || returns_ref<B> || std::is_same_v<A, B>,
                  "refx: both branches of a cond return the same type (a Value, a std::tuple of Values, or "
                  "nothing); convert a number with Scalar<T>(n)");
    static_assert(!std::is_same_v<A, B> || results<A>::supported || returns_ref<A>,
                  "refx: a cond branch returns nothing, a Value, or a std::tuple of Values");
    return !returns_ref<A> && !returns_ref<B> && std::is_same_v<A, B> && results<A>::supported;
  }
  return false;
}
}  // namespace detail

/// lax.cond: traces both branches, each into its own body, and runs the one
/// `pred` picks; returns its results (nothing, a Value, or a std::tuple of
/// Values, the same types from both). The untaken branch does not run, so
/// its loads and copies need not be valid there.
template <class Then, class Else>
auto cond(const Scalar<bool>& pred, Then&& then_fn, Else&& else_fn,
          refx::source_location loc = refx::source_location::current()) {
  if constexpr (!detail::check_cond<Then, Else>()) {
    return;  // a check above failed to compile
  } else {
    using R = std::invoke_result_t<Then&>;
    auto& t = detail::Tracer::current(loc);
    t.note(loc);
    t.check_value(pred.id(), loc);
    std::vector<ValueId> a, b;
    const BlockId bodies[] = {detail::trace_branch<R>(t, then_fn, a, loc), detail::trace_branch<R>(t, else_fn, b, loc)};
    for (std::size_t k = 0; k < a.size(); ++k) {
      const ValueType& ta = t.graph().type(a[k]);
      const ValueType& tb = t.graph().type(b[k]);
      if (!(ta == tb))
        trace_error(loc, "cond's branches return result {} as {}{} and {}{}: both must have one type and shape", k,
                    ta.dtype, ta.shape, tb.dtype, tb.shape);
    }
    const ValueId ins[] = {pred.id()};
    const auto types = detail::types_of<void>(t.graph(), a);
    const auto out = t.record(prim::cond, ins, {}, {}, types, {}, bodies, loc);
    if constexpr (!std::is_void_v<R>) return detail::results<R>::rebuild(out);
  }
}

/// Runs body() where `pred` is true and otherwise() where it is false.
template <class F, class G>
  requires(std::is_invocable_v<G&>)
void when(const Scalar<bool>& pred, F&& body, G&& otherwise,
          refx::source_location loc = refx::source_location::current()) {
  static_assert(std::is_void_v<std::invoke_result_t<F&>> && std::is_void_v<std::invoke_result_t<G&>>,
                "refx: when's bodies return nothing; for results, write cond(pred, then_fn, else_fn)");
  cond(pred, body, otherwise, loc);
}

namespace detail {
/// switch_'s index, with the line it was written on.
struct SwitchIndex {
  template <class I>
    requires std::is_convertible_v<const I&, Scalar<std::int32_t>>
  SwitchIndex(const I& i, refx::source_location l = refx::source_location::current())  // NOLINT: implicit
      : index(i), loc(l) {}
  Scalar<std::int32_t> index;
  refx::source_location loc;
};

template <int K, class F, class... Rest>
auto switch_from(const SwitchIndex& i, F& f, Rest&... rest) {
  if constexpr (sizeof...(Rest) == 0) {
    return f();
  } else {
    return cond(
        i.index <= K, f, [&] { return switch_from<K + 1>(i, rest...); }, i.loc);
  }
}
}  // namespace detail

/// lax.switch: runs branches[index] (index clamped to [0, n - 1]) and returns
/// its results; every branch returns the same type, as in cond.
template <class... F>
auto switch_(const detail::SwitchIndex& index, F&&... branches) {
  static_assert(sizeof...(F) >= 1, "refx: switch_ needs at least one branch");
  static_assert((std::is_invocable_v<F&> && ...),
                "refx: switch_'s branches are callables taking no arguments: switch_(i, [&] { ... }, [&] { ... })");
  if constexpr (sizeof...(F) >= 1 && (std::is_invocable_v<F&> && ...))
    return detail::switch_from<0>(index, branches...);
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
