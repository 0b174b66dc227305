#pragma once
// How a handle type becomes a block parameter: kernel arguments, run_scoped
// scratch and run_state Refs. Semaphore handles specialise param_traits too.

#include <optional>
#include <tuple>
#include <vector>

#include <refx/ir/regions.hpp>
#include <refx/trace/ref.hpp>

namespace refx {

template <class P>
struct param_traits {
  static constexpr bool supported = false;
};

template <class T, class E, class Space>
struct param_traits<Ref<T, E, Space>> {
  static constexpr bool supported = true;
  using extents_type = E;
  static ValueType type(const Shape& s) {
    return ValueType{dtype_v<T>, ValueKind::ref, Space::value, SemaphoreKind::none, s};
  }
  static Ref<T, E, Space> make(ViewId v) { return Ref<T, E, Space>::from_view(v); }
};

namespace detail {

template <class E>
constexpr bool is_static_extents() {
  for (auto d : E::values)
    if (d == dyn) return false;
  return true;
}

template <class T>
struct contains_ref : std::bool_constant<is_ref_v<T>> {};
template <class... T>
struct contains_ref<std::tuple<T...>> : std::bool_constant<(contains_ref<std::remove_cvref_t<T>>::value || ...)> {};
template <class A, class B>
struct contains_ref<std::pair<A, B>> : std::bool_constant<contains_ref<A>::value || contains_ref<B>::value> {};
template <class T, std::size_t N>
struct contains_ref<std::array<T, N>> : contains_ref<T> {};
template <class T, class A>
struct contains_ref<std::vector<T, A>> : contains_ref<T> {};
template <class T>
struct contains_ref<std::optional<T>> : contains_ref<T> {};

template <class R>
inline constexpr bool returns_ref = contains_ref<std::remove_cvref_t<R>>::value;

/// Parameter types of a (non-generic) callable.
template <class F>
struct callable_args : callable_args<decltype(&F::operator())> {};
template <class F>
  requires(!std::is_same_v<F, std::remove_cvref_t<F>>)
struct callable_args<F> : callable_args<std::remove_cvref_t<F>> {};
template <class R, class... A>
struct callable_args<R (*)(A...)> {
  using type = std::tuple<std::remove_cvref_t<A>...>;
};
template <class R, class... A>
struct callable_args<R(A...)> {
  using type = std::tuple<std::remove_cvref_t<A>...>;
};
template <class C, class R, class... A>
struct callable_args<R (C::*)(A...)> {
  using type = std::tuple<std::remove_cvref_t<A>...>;
};
template <class C, class R, class... A>
struct callable_args<R (C::*)(A...) const> {
  using type = std::tuple<std::remove_cvref_t<A>...>;
};
template <class C, class R, class... A>
struct callable_args<R (C::*)(A...) noexcept> {
  using type = std::tuple<std::remove_cvref_t<A>...>;
};
template <class C, class R, class... A>
struct callable_args<R (C::*)(A...) const noexcept> {
  using type = std::tuple<std::remove_cvref_t<A>...>;
};

template <class F>
concept has_deducible_params = std::is_function_v<std::remove_pointer_t<std::remove_cvref_t<F>>> ||
                               requires { &std::remove_cvref_t<F>::operator(); };

/// F could be a kernel or body: a function, a function pointer or a class
/// (a lambda); not a Ref, a Value, a number or a string.
template <class F>
inline constexpr bool is_callable_kind_v = std::is_function_v<std::remove_pointer_t<std::remove_cvref_t<F>>> ||
                                           (std::is_class_v<std::remove_cvref_t<F>> && !is_ref_v<F> && !is_value_v<F>);

/// The checks of a kernel given to trace / kernel; false stops the caller
/// (`if constexpr`) before it compiles on into follow-on errors.
template <class F>
constexpr bool check_kernel_callable() {
  static_assert(is_callable_kind_v<F>,
                "refx: a kernel is a callable: a lambda or function whose parameters are Refs, e.g. "
                "[](VmemRef<const float, 128> x, VmemRef<float, 128> y) { ... }; a Ref, Value, number or string is not "
                "one");
  if constexpr (!is_callable_kind_v<F>) {
    return false;
  } else {
    static_assert(has_deducible_params<F>,
                  "refx: trace needs a kernel with explicit parameter types (Ref<...>, semaphores), not auto");
    return has_deducible_params<F>;
  }
}

template <class P>
inline constexpr bool is_bad_ref_v = false;
template <class T, class E, class Space>
inline constexpr bool is_bad_ref_v<Ref<T, E, Space>> = !ref_args_ok<T, E, Space>;

template <class Params>
struct params_ok;
template <class... P>
struct params_ok<std::tuple<P...>> {
  static constexpr bool bad_ref = (is_bad_ref_v<P> || ...);
  static constexpr bool kinds = (param_traits<P>::supported && ...);
};

/// The checks of a kernel's or run_scoped body's parameter types (a tuple);
/// false stops the caller (`if constexpr`) before it compiles on into
/// follow-on errors. A Ref with bad arguments already reported its own error.
template <class Params>
constexpr bool check_params() {
  if constexpr (params_ok<Params>::bad_ref) {
    return false;
  } else {
    static_assert(params_ok<Params>::kinds,
                  "refx: every kernel / run_scoped parameter must be a Ref<...> or a semaphore handle");
    return params_ok<Params>::kinds;
  }
}

/// Adds one block parameter per handle type in Params and returns the handles.
/// `shapes` is empty (every extent static) or gives one shape per parameter.
template <class Params>
struct param_maker;
template <class... P>
struct param_maker<std::tuple<P...>> {
  static std::tuple<P...> make(Tracer& t, const std::vector<Shape>& shapes, std::int32_t scope, SourceLoc loc) {
    static_assert((param_traits<P>::supported && ...),
                  "refx: every kernel / run_scoped parameter must be a Ref<...> or a semaphore handle");
    if (!shapes.empty() && shapes.size() != sizeof...(P))
      trace_error(loc, hint("give one shape per parameter, or none when every extent is static"),
                  "{} shapes given for {} parameters", shapes.size(), sizeof...(P));
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<P...>{make_one<P>(t, shapes, I, scope, loc)...};
    }
    (std::index_sequence_for<P...>{});
  }

  template <class H>
  static H make_one(Tracer& t, const std::vector<Shape>& shapes, std::size_t i, std::int32_t scope, SourceLoc loc) {
    using E = typename param_traits<H>::extents_type;
    Shape s;
    if (shapes.empty()) {
      if constexpr (!is_static_extents<E>()) trace_error(loc, "parameter {} has dynamic extents; pass its shape", i);
      else s = static_shape<E>();
    } else {
      s = shapes[i];
      bool ok = s.rank() == E::rank;
      for (std::size_t d = 0; ok && d < E::rank; ++d) ok = E::values[d] == dyn || E::values[d] == s[d];
      if (!ok) trace_error(loc, "shape {} given for parameter {} does not match its static extents", s, i);
      for (const std::int64_t d : s.dims())
        if (d < 0) trace_error(loc, "shape {} given for parameter {} has a negative extent", s, i);
    }
    const ValueId v = t.add_param(param_traits<H>::type(s), scope);
    return param_traits<H>::make(whole_view(t.graph(), v));
  }
};

}  // namespace detail
}  // namespace refx
