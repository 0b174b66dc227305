#pragma once
// refx::map(fn, values...): an elementwise op whose element function is a
// C++ callable, compiled as one loop. `map([](float x, float y) { return
// std::max(x * 2 + y * 3, 0.0f); }, a, b)` records one op; at run time it is
// one pass over the elements with the whole body in registers, where the
// same chain written with Value operators is four ops (the fusion pass joins
// them into one loop, which runs them as one stage program, also in
// registers: ir/primitives/detail/fused_stages.hpp).
// The op is elementwise: the fusion pass fuses it with the loads that feed it
// and the store it feeds, so `z.store(map(f, x.load(), y.load()))` reads the
// Refs and writes the output directly.
//
// A generic callable (`[](auto x) { ... }`) over floating-point operands is
// called per tile instead, with MapTile operands (map_tile.hpp): SIMD
// arithmetic and the vectorised math kernels of the exp, tanh ... primitives.
//
// Each distinct (callable, result, operand types) gets its own primitive,
// registered on first use and named "map#<n>": the n-th map function the
// process traced (the same in every process that traces its kernels in the
// same order). Errors, printed graphs and timelines show that name; the op's
// source line tells which map it is.

#include <algorithm>
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
#include <refx/trace/map_tile.hpp>
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

/// Whether map calls F per tile with MapTile<C> operands: F's call operator
/// is a template (a generic lambda), every operand is computed in one
/// floating-point type C, and F returns a tile when called with tiles. (The
/// last check instantiates F's body with tiles: a generic body that only
/// works on scalars fails to compile there; give it typed parameters.)
template <class F, class T0, class... T>
consteval bool map_tiled() {
  using C = compute_t<T0>;
  if constexpr ((std::is_same_v<C, float> || std::is_same_v<C, double>)&&(std::is_same_v<compute_t<T>, C> && ...) &&
                !requires { &F::operator(); }) {
    if constexpr (std::is_invocable_v<const F&, MapTile<C>, MapTile<compute_t<T>>...>)
      return is_map_tile_v<std::remove_cvref_t<std::invoke_result_t<const F&, MapTile<C>, MapTile<compute_t<T>>...>>>;
  }
  return false;
}

/// The element function of map over operand element types T...: each element
/// is converted to compute_t (bf16 and f16 to float), `F{}` is called, and its
/// result converted to Out once (bf16 / f16: rounded to nearest even). When
/// Tiled, F is called once per tile of map_tile_size elements.
template <class F, class Out, bool Tiled, class... T>
struct MapKernel {
  template <std::size_t... I>
  static void run(const void* const* ins, void* out, std::int64_t n, std::index_sequence<I...>) {
    Out* o = static_cast<Out*>(out);
    if constexpr (Tiled) {
      for (std::int64_t b = 0; b < n; b += map_tile_size) {
        const std::int64_t m = std::min(map_tile_size, n - b);
        F{}(MapTile<compute_t<T>>::load(static_cast<const T*>(ins[I]) + b, m)...).store(o + b);
      }
    } else {
      const std::tuple<const T*...> in{static_cast<const T*>(ins[I])...};
      for (std::int64_t i = 0; i < n; ++i)
        o[i] = static_cast<Out>(F{}(static_cast<compute_t<T>>(std::get<I>(in)[i])...));
    }
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

/// The element type of the tile F returns (formed only on the tiled path).
template <class F, class... T>
struct map_tile_result {
  using type = typename std::remove_cvref_t<std::invoke_result_t<const F&, MapTile<compute_t<T>>...>>::element_type;
};
template <class F, class... T>
struct map_scalar_result {
  using type = map_result_t<F, T...>;
};

/// The default result element type: that of the first operand when the
/// function returns its compute type (bf16 in, float out: bf16), else what
/// the function returns.
template <class F, bool Tiled, class T0, class... T>
struct map_default_out {
  using result = typename std::conditional_t<Tiled, map_tile_result<F, T0, T...>, map_scalar_result<F, T0, T...>>::type;
  using type = std::conditional_t<std::is_same_v<result, compute_t<T0>>, T0, result>;
};

template <class E, class... V>
struct map_extents {
  static constexpr bool broadcast = true;
  using type = E;
};
template <class E, class V, class... Vs>
struct map_extents<E, V, Vs...> {
  using VE = typename map_operand<std::remove_cvref_t<V>>::extents;
  static constexpr bool broadcast =
      extents_broadcast<E, VE> && map_extents<broadcast_extents_t<E, VE>, Vs...>::broadcast;
  using type = typename map_extents<broadcast_extents_t<E, VE>, Vs...>::type;
};

}  // namespace detail

/// Applies `fn` to the elements of `values` (Values that broadcast to one
/// shape, as the operators' operands do), as one compiled loop: the result's
/// element i is `Out(fn(compute_t(values[i])...))`. A generic `fn` over
/// floating-point operands is called per tile with MapTile operands instead
/// (SIMD; see map_tile.hpp). `fn` must not capture: write constants in its
/// body. `Out` defaults to the first operand's element type when `fn` returns
/// its compute type (f32 for bf16 / f16, which round once, when the result is
/// stored), else to what `fn` returns.
template <class Out = void, class F, class V0, class... V>
  requires(is_value_v<V0> && (is_value_v<V> && ...))
auto map(F, const V0& v0, const V&... vs) {
  using T0 = typename detail::map_operand<V0>::type;
  static_assert(std::is_empty_v<F> && std::is_default_constructible_v<F>,
                "refx: map's function must not capture anything (it is called as F{} on the elements); write "
                "constants in its body, or pass them as Scalar operands");
  static_assert(sizeof...(V) + 1 <= 8, "refx: map takes at most 8 operands");
  constexpr bool tiled = detail::map_tiled<F, T0, typename detail::map_operand<V>::type...>();
  if constexpr (!tiled)
    static_assert(std::is_invocable_v<const F&, compute_t<T0>, compute_t<typename detail::map_operand<V>::type>...>,
                  "refx: map's function cannot be called with one element of each operand (bf16 and f16 elements "
                  "are passed as float)");
  using R =
      std::conditional_t<std::is_void_v<Out>,
                         typename detail::map_default_out<F, tiled, T0, typename detail::map_operand<V>::type...>::type,
                         Out>;
  static_assert(Element<R>, "refx: map's function must return a number or bool (or give map<Out> an element type)");
  static_assert(detail::map_extents<extents<>, V0, V...>::broadcast,
                "refx: map's operands do not broadcast to one shape: their ranks must be equal (or scalars), and each "
                "dimension equal or 1");
  using E = typename detail::map_extents<extents<>, V0, V...>::type;
  using K = detail::MapKernel<F, R, tiled, T0, typename detail::map_operand<V>::type...>;
  // Operands are broadcast to one shape (the fusion pass reads them in place).
  ValueId ins[] = {v0.id(), vs.id()...};
  detail::broadcast_operands(ins, "map", {});
  return detail::wrap<R, E>(detail::Tracer::current().bind1(K::primitive(), ins, {}, {}, {}));
}

}  // namespace refx
