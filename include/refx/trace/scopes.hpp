#pragma once
// run_state and run_scoped: Refs that live for the duration of a body.
//   run_state(values, body) makes one Ref per value, runs body over them, and
//     returns their final contents.
//   run_scoped(body) allocates the body's parameters (scratch buffers and
//     semaphores) for its duration and returns what the body returns.
// Nothing a scope allocates escapes it: returning a Ref does not compile, and
// using one after the scope ended (e.g. through a captured copy) is a
// TraceError naming the line.

#include <functional>
#include <refx/core/source_location.hpp>

#include <refx/ir/primitives/builtins.hpp>
#include <refx/trace/detail/params.hpp>
#include <refx/trace/detail/results.hpp>

namespace refx {

namespace detail {
template <class F, class Params>
struct scoped_result;
template <class F, class... P>
struct scoped_result<F, std::tuple<P...>> {
  using type = std::invoke_result_t<F, P...>;
};

/// Traces `body(params...)` into a new block owned by a scope op.
template <class Params, class F>
auto trace_scope(F& body, const std::vector<Shape>& shapes, SourceLoc loc) {
  using R = typename scoped_result<F, Params>::type;
  Tracer& t = Tracer::current(loc);
  t.note(loc);
  const BlockId block = t.open_block();
  const std::int32_t scope = t.open_scope(loc);
  Params params = param_maker<Params>::make(t, shapes, scope, loc);
  std::vector<ValueId> out;
  if constexpr (std::is_void_v<R>) {
    std::apply(body, params);
  } else {
    results<R>::ids(std::apply(body, params), out);
  }
  return std::tuple{block, scope, std::move(params), std::move(out)};
}

REFX_DECL std::span<const ValueId> close_scope(Tracer& t, BlockId block, std::int32_t scope,
                                               std::span<const ValueId> inits, std::vector<ValueId> results_,
                                               SourceLoc loc);
#if REFX_DEFINITIONS
REFX_DECL std::span<const ValueId> close_scope(Tracer& t, BlockId block, std::int32_t scope,
                                               std::span<const ValueId> inits, std::vector<ValueId> results_,
                                               SourceLoc loc) {
  for (ValueId r : results_) t.check_value(r, loc);
  t.graph().mutable_block(block).results = results_;
  t.close_scope(scope);
  t.close_block(block);
  const auto types = types_of<void>(t.graph(), results_);
  const std::int64_t attrs[] = {static_cast<std::int64_t>(inits.size())};
  const BlockId bodies[] = {block};
  return t.record(prim::scope, inits, {}, attrs, types, {}, bodies, loc);
}
#endif  // REFX_DEFINITIONS

}  // namespace detail

/// A buffer or semaphore that lives until the kernel ends (for state that
/// outlives a scope, like the semaphores inside a ppermute future).
template <class H>
H allocate(const Shape& shape = {}, refx::source_location loc = refx::source_location::current()) {
  static_assert(param_traits<H>::supported, "refx: allocate makes a Ref<...> or a semaphore handle");
  auto& t = detail::Tracer::current(loc);
  Shape s = shape;
  using E = typename param_traits<H>::extents_type;
  if (s.rank() == 0 && E::rank != 0) {
    if constexpr (detail::is_static_extents<E>()) s = static_shape<E>();
    else trace_error(loc, "allocate of a dynamic-extent Ref needs its shape");
  }
  const ValueType types[] = {param_traits<H>::type(s)};
  const ValueId v = t.record(prim::allocate, {}, {}, {}, types, {}, {}, loc).front();
  return param_traits<H>::make(whole_view(t.graph(), v));
}

/// Allocates the body's parameters (Refs and semaphores with static extents)
/// for the body's duration; returns the body's result (void, Value or tuple).
template <class F>
auto run_scoped(F&& body, refx::source_location loc = refx::source_location::current()) {
  return run_scoped(std::vector<Shape>{}, std::forward<F>(body), loc);
}

/// As above, with one shape per parameter (for dynamic extents).
template <class F>
auto run_scoped(const std::vector<Shape>& shapes, F&& body,
                refx::source_location loc = refx::source_location::current()) {
  static_assert(detail::is_callable_kind_v<F>,
                "refx: run_scoped takes a body: a lambda whose parameters are the scratch Refs and semaphores it "
                "allocates, e.g. run_scoped([&](VmemRef<float, 128> tmp, DmaSemaphore sem) { ... }); a Ref or Value "
                "is not one");
  if constexpr (!detail::is_callable_kind_v<F>) {
    return;
  } else {
    static_assert(detail::has_deducible_params<F>,
                  "refx: run_scoped needs a body with explicit parameter types (Ref<...>, semaphores), not auto");
    if constexpr (!detail::has_deducible_params<F>) {
      return;
    } else if constexpr (!detail::check_params<typename detail::callable_args<F>::type>()) {
      return;  // not reached: the check failed to compile
    } else {
      using Params = typename detail::callable_args<F>::type;
      using R = typename detail::scoped_result<F&, Params>::type;
      static_assert(!detail::returns_ref<R>,
                    "refx: a run_scoped body must not return a Ref (or anything holding one); its Refs end with the "
                    "scope. Return Values read with load() instead");
      static_assert(
          detail::results<R>::supported || !std::is_class_v<R> || detail::returns_ref<R>,
          "refx: a run_scoped body returns void, a Value or a std::tuple of Values, not a struct: if the struct "
          "holds one of the scope's Refs, that Ref ends with the scope. Return Values read with load() in a "
          "std::tuple instead");
      static_assert(detail::results<R>::supported || std::is_class_v<R>,
                    "refx: a run_scoped body returns void, a Value or a std::tuple of Values");
      if constexpr (detail::returns_ref<R> || !detail::results<R>::supported) {
        return;  // not reached: a check above failed to compile
      } else {
        auto [block, scope, params, out] = detail::trace_scope<Params>(body, shapes, loc);
        auto& t = detail::Tracer::current();
        const auto outs = detail::close_scope(t, block, scope, {}, std::move(out), loc);
        if constexpr (!std::is_void_v<R>) return detail::results<R>::rebuild(outs);
      }
    }
  }
}

/// One Ref per value, initialised with it; returns the Refs' final contents.
template <class F, class... T, class... E>
std::tuple<Value<T, E>...> run_state(const std::tuple<Value<T, E>...>& init, F&& body,
                                     refx::source_location loc = refx::source_location::current()) {
  using Params = std::tuple<Ref<T, E, Vmem>...>;
  using R = typename detail::scoped_result<F&, Params>::type;
  static_assert(!detail::returns_ref<R>,
                "refx: a run_state body must not return a Ref (or anything holding one); run_state returns the "
                "Refs' final contents for you");
  static_assert(std::is_void_v<R>,
                "refx: a run_state body returns nothing; run_state returns the Refs' final contents");
  auto& t = detail::Tracer::current(loc);
  std::vector<ValueId> inits;
  detail::results<std::tuple<Value<T, E>...>>::ids(init, inits);
  std::vector<Shape> shapes;
  for (ValueId v : inits) {
    t.check_value(v, loc);
    shapes.push_back(t.graph().type(v).shape);
  }
  auto [block, scope, params, out] = detail::trace_scope<Params>(body, shapes, loc);
  // The block's results are the Refs' final contents. (Through a named
  // reference: clang < 16 cannot capture a structured binding.)
  std::vector<ValueId>& results = out;
  std::apply([&](const auto&... r) { (results.push_back(r.load(loc).id()), ...); }, params);
  const auto outs = detail::close_scope(t, block, scope, inits, std::move(out), loc);
  return detail::results<std::tuple<Value<T, E>...>>::rebuild(outs);
}

/// A Ref as the initial contents: one sentence instead of "no matching
/// function".
template <class R, class F>
  requires(is_ref_v<R> || detail::contains_ref<R>::value)
void run_state(const R&, F&&, refx::source_location = refx::source_location::current()) {
  static_assert(detail::dependent_false<R>,
                "refx: run_state takes initial Values, not a Ref: run_state(x.load(), body) gives the body a fresh "
                "Vmem Ref holding them; to update a Ref in place, write it directly");
}

/// Single-value form of run_state.
template <class F, class T, class E>
Value<T, E> run_state(const Value<T, E>& init, F&& body, refx::source_location loc = refx::source_location::current()) {
  return std::get<0>(run_state(std::tuple<Value<T, E>>{init}, std::forward<F>(body), loc));
}

}  // namespace refx
