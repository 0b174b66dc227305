#pragma once
// Values cut and repeated, as published Pallas kernels write them:
//   tile<R0, R1>(x)                    jnp.tile(x, (R0, R1)): copies side by side
//   slice_in_dim<Axis, Start, Size>(x) x[..., Start:Start + Size, ...] along Axis
// (lax.slice_in_dim; flash attention's l[:, :head_dim]). tile is a
// broadcast and a reshape; a slice goes through a scoped Vmem buffer (a
// store and a load of the view), as a TPU kernel's value slice is a copy
// between vector registers.

#include <cstddef>
#include <cstdint>
#include <utility>

#include <refx/core/source_location.hpp>
#include <refx/trace/ref.hpp>
#include <refx/trace/scopes.hpp>
#include <refx/trace/value.hpp>

namespace refx {

namespace detail {
template <class E>
constexpr bool all_static_extents() {
  for (std::size_t i = 0; i < E::rank; ++i)
    if (E::values[i] == dyn) return false;
  return true;
}
}  // namespace detail

/// jnp.tile for a rank-1 Value: R copies of x, one after the other.
template <std::int64_t R, class T, class E>
  requires(E::rank == 1)
auto tile(const Value<T, E>& x, refx::source_location loc = refx::source_location::current()) {
  static_assert(detail::all_static_extents<E>(), "refx: tile takes a Value of static extents");
  static_assert(R >= 1, "refx: tile's repeat counts must be >= 1");
  constexpr std::int64_t n = E::values[0];
  return reshape<R * n>(broadcast_to<R, n>(x, loc), loc);
}

/// jnp.tile for a rank-2 Value: an (R0, R1) grid of copies of x. tile<1, 4>
/// of a (block_q, 128) Value is (block_q, 512), each row its 128 values four
/// times over.
template <std::int64_t R0, std::int64_t R1, class T, class E>
  requires(E::rank == 2)
auto tile(const Value<T, E>& x, refx::source_location loc = refx::source_location::current()) {
  static_assert(detail::all_static_extents<E>(), "refx: tile takes a Value of static extents");
  static_assert(R0 >= 1 && R1 >= 1, "refx: tile's repeat counts must be >= 1");
  constexpr std::int64_t a = E::values[0], b = E::values[1];
  // Along the columns: (a, 1, b) -> (a, R1, b) -> (a, R1 * b); then the rows.
  const auto wide = reshape<a, R1 * b>(broadcast_to<a, R1, b>(expand_dims<1>(x, loc), loc), loc);
  if constexpr (R0 == 1) return wide;
  else return reshape<R0 * a, R1 * b>(broadcast_to<R0, a, R1 * b>(wide, loc), loc);
}

/// tile with a repeat count per dimension that does not match the Value's rank.
template <std::int64_t... R, class T, class E>
  requires(sizeof...(R) != E::rank || E::rank > 2)
auto tile(const Value<T, E>& x, refx::source_location = refx::source_location::current()) {
  static_assert(sizeof...(R) == E::rank, "refx: tile takes one repeat count per dimension of the Value");
  static_assert(E::rank <= 2, "refx: tile takes a rank-1 or rank-2 Value");
  return x;
}

namespace detail {
template <std::size_t I, std::size_t Axis, std::int64_t Start, std::int64_t Size>
auto slice_index() {
  if constexpr (I == Axis) return ds<Size>(Start);
  else return all;
}
}  // namespace detail

/// lax.slice_in_dim(x, Start, Start + Size, axis=Axis) with static bounds:
/// the elements [Start, Start + Size) along Axis, every element of the others.
template <std::size_t Axis, std::int64_t Start, std::int64_t Size, class T, class E>
auto slice_in_dim(const Value<T, E>& x, refx::source_location loc = refx::source_location::current()) {
  static_assert(detail::all_static_extents<E>(), "refx: slice_in_dim takes a Value of static extents");
  static_assert(Axis < E::rank, "refx: slice_in_dim's axis is past the Value's rank");
  static_assert(Start >= 0 && Size >= 1 && Start + Size <= E::values[Axis < E::rank ? Axis : 0],
                "refx: slice_in_dim's [Start, Start + Size) lies outside the Value along its axis");
  return run_scoped(
      [&](Ref<T, E, Vmem> tmp) {
        tmp.store(x);
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
          return tmp.at(detail::slice_index<I, Axis, Start, Size>()...).load(loc);
        }
        (std::make_index_sequence<E::rank>{});
      },
      loc);
}

}  // namespace refx
