#pragma once
// refx::map(fn, values...): an elementwise op whose element function is a
// C++ callable, compiled as one loop. `map([](float x, float y) { return
// std::max(x * 2 + y * 3, 0.0f); }, a, b)` records one op; at run time it is
// one pass over the elements with the whole body in registers, where the
// same chain written with Value operators is four ops (the fusion pass joins
// them into one loop, but runs its members one after another over tiles).
// The op is elementwise: the fusion pass fuses it with the loads that feed it
// and the store it feeds, so `z.store(map(f, x.load(), y.load()))` reads the
// Refs and writes the output directly.
//
// Each distinct (callable, result, operand types) gets its own primitive,
// registered on first use and named "map#<n>": the n-th map function the
// process traced (the same in every process that traces its kernels in the
// same order). Errors, printed graphs and timelines show that name; the op's
// source line tells which map it is.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include <refx/core/dtype.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/builtins.hpp>
#include <refx/trace/value.hpp>

namespace refx {
namespace detail {

/// How many map functions the process has registered (the n of "map#<n>").
inline std::atomic<std::int64_t> map_functions{0};

template <class V>
struct map_operand;
template <class T, class E>
struct map_operand<Value<T, E>> {
  using type = T;
  using extents = E;
};

/// The element function of map over operand element types T...: each element
/// is converted to compute_t (bf16 and f16 to float), `F{}` is called, and its
/// result converted to Out once (bf16 / f16: rounded to nearest even).
template <class F, class Out, class... T>
struct MapKernel {
  template <std::size_t... I>
  static void run(const void* const* ins, void* out, std::int64_t n, std::index_sequence<I...>) {
    const std::tuple<const T*...> in{static_cast<const T*>(ins[I])...};
    Out* o = static_cast<Out*>(out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(F{}(static_cast<compute_t<T>>(std::get<I>(in)[i])...));
  }
  static void kernel(DType, const void* const* ins, void* out, std::int64_t n) {
    run(ins, out, n, std::index_sequence_for<T...>{});
  }
  static void abstract(AbstractContext& c) {
    constexpr DType types[] = {dtype_v<T>...};
    std::size_t shaped = 0;  // the first operand that is not a scalar, if any
    for (std::size_t i = 0; i < c.num_inputs(); ++i)
      if (c.input(i).shape.rank() != 0) shaped = i;
    for (std::size_t i = 0; i < c.num_inputs(); ++i) {
      const ValueType& v = c.input(i);
      if (v.is_ref()) c.fail("operand {} is a Ref; read it with load() first", i);
      if (v.dtype != types[i])
        c.fail("operand {} is {}, not the {} the function was instantiated for", i, v.dtype, types[i]);
      if (!(v.shape == c.input(shaped).shape))
        c.fail("operands {} and {} have different shapes ({} and {}); map's operands have one shape", shaped, i,
               c.input(shaped).shape, v.shape);
    }
    ValueType out = c.input(shaped);
    out.dtype = dtype_v<Out>;
    c.add_output(out);
  }
  static void print(const Graph&, const Op&, std::string& s) { s += "map"; }
  static const Primitive& primitive() {
    // The impl of every elementwise primitive (elementwise_impl) calls the
    // primitive's element function over the operands' buffers. The registry
    // keeps a copy of the name.
    static const Primitive& p = []() -> const Primitive& {
      const std::string name = fmt::format("map#{}", ++map_functions);
      return define_primitive(Primitive{name, &abstract, prim::add.impl, &print, nullptr, ControlKind::none, &kernel});
    }();
    return p;
  }
};

template <class F, class... T>
using map_result_t = std::remove_cvref_t<std::invoke_result_t<const F&, compute_t<T>...>>;

/// The default result element type: that of the first operand when the
/// function returns its compute type (bf16 in, float out: bf16), else what
/// the function returns.
template <class F, class T0, class... T>
using map_default_out_t =
    std::conditional_t<std::is_same_v<map_result_t<F, T0, T...>, compute_t<T0>>, T0, map_result_t<F, T0, T...>>;

template <class E, class... V>
struct map_extents {
  using type = E;
};
template <class E, class V, class... Vs>
struct map_extents<E, V, Vs...> {
  using VE = typename map_operand<std::remove_cvref_t<V>>::extents;
  using type = typename map_extents<std::conditional_t<E::rank == 0, VE, E>, Vs...>::type;
};

}  // namespace detail

/// Applies `fn` to the elements of `values` (Values of one shape; Scalars are
/// broadcast), as one compiled loop: the result's element i is
/// `Out(fn(compute_t(values[i])...))`. `fn` must not capture: write constants
/// in its body. `Out` defaults to the first operand's element type when `fn`
/// returns its compute type (f32 for bf16 / f16, which round once, when the
/// result is stored), else to what `fn` returns.
template <class Out = void, class F, class V0, class... V>
  requires(is_value_v<V0> && (is_value_v<V> && ...))
auto map(F, const V0& v0, const V&... vs) {
  using T0 = typename detail::map_operand<V0>::type;
  static_assert(std::is_empty_v<F> && std::is_default_constructible_v<F>,
                "refx: map's function must not capture anything (it is called as F{} on the elements); write "
                "constants in its body, or pass them as Scalar operands");
  static_assert(std::is_invocable_v<const F&, compute_t<T0>, compute_t<typename detail::map_operand<V>::type>...>,
                "refx: map's function cannot be called with one element of each operand (bf16 and f16 elements "
                "are passed as float)");
  static_assert(sizeof...(V) + 1 <= 8, "refx: map takes at most 8 operands");
  using R = std::conditional_t<std::is_void_v<Out>,
                               detail::map_default_out_t<F, T0, typename detail::map_operand<V>::type...>, Out>;
  static_assert(Element<R>, "refx: map's function must return a number or bool (or give map<Out> an element type)");
  using E = typename detail::map_extents<extents<>, V0, V...>::type;
  using K = detail::MapKernel<F, R, T0, typename detail::map_operand<V>::type...>;
  // Scalars among shaped operands are broadcast (the fusion pass reads them
  // as scalars again).
  const bool any_shaped = ((v0.shape().rank() != 0) || ... || (vs.shape().rank() != 0));
  auto operand = [&](const auto& v) -> ValueId {
    if (!any_shaped || v.shape().rank() != 0) return v.id();
    Shape s;
    if (v0.shape().rank() != 0) s = v0.shape();
    else ((vs.shape().rank() != 0 && s.rank() == 0 ? (void)(s = vs.shape()) : (void)0), ...);
    return detail::broadcast_to(v.id(), s);
  };
  const ValueId ins[] = {operand(v0), operand(vs)...};
  return detail::wrap<R, E>(detail::Tracer::current().bind1(K::primitive(), ins, {}, {}, {}));
}

}  // namespace refx
