#pragma once
// Values cut, repeated, rotated and reinterpreted, and masked loads and
// stores, as published Pallas kernels write them:
//   tile<R0, R1>(x)                    jnp.tile(x, (R0, R1)): copies side by side
//   slice_in_dim<Axis, Start, Size>(x) x[..., Start:Start + Size, ...] along Axis
//                                      (lax.slice_in_dim; flash attention's l[:, :head_dim])
//   roll<Axis, Shift>(x)               jnp.roll(x, Shift, Axis) / pltpu.roll with a static shift
//   bitcast<U>(x)                      pltpu.bitcast / lax.bitcast_convert_type on a Value
//   load(ref, mask, other)             pl.load(ref, mask=m, other=o): other where the mask is false
//   store(ref, v, mask)                pl.store(ref, v, mask=m): only where the mask is true
// tile is a broadcast and a reshape; the others go through a scoped Vmem
// buffer (a store and a load of views), as a TPU kernel's value slice is a
// copy between vector registers.

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
/// The view of `ref` at [Start, Start + Size) along Axis, all of the others.
template <std::size_t Axis, std::int64_t Start, std::int64_t Size, class R>
auto axis_view(const R& ref) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) { return ref.at(slice_index<I, Axis, Start, Size>()...); }
  (std::make_index_sequence<R::rank>{});
}
/// ref.store(v) on the user's line.
template <class R, class V>
void store_on(const R& ref, const V& v, refx::source_location loc) {
  ref.store(StoreArg<typename R::element_type, typename R::extents_type>(v, loc));
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
        detail::store_on(tmp, x, loc);
        return detail::axis_view<Axis, Start, Size>(tmp).load(loc);
      },
      loc);
}

/// jnp.roll(x, Shift, axis=Axis) with a static shift: element i moves to
/// (i + Shift) mod n along Axis (a negative Shift rolls the other way).
template <std::size_t Axis, std::int64_t Shift, class T, class E>
auto roll(const Value<T, E>& x, refx::source_location loc = refx::source_location::current()) {
  static_assert(detail::all_static_extents<E>(), "refx: roll takes a Value of static extents");
  static_assert(Axis < E::rank, "refx: roll's axis is past the Value's rank");
  if constexpr (detail::all_static_extents<E>() && Axis < E::rank) {
    constexpr std::int64_t n = E::values[Axis];
    constexpr std::int64_t s = ((Shift % n) + n) % n;
    if constexpr (s == 0) {
      return x;
    } else {
      return run_scoped(
          [&](Ref<T, E, Vmem> src, Ref<T, E, Vmem> dst) {
            detail::store_on(src, x, loc);
            detail::store_on(detail::axis_view<Axis, s, n - s>(dst), detail::axis_view<Axis, 0, n - s>(src).load(loc),
                             loc);
            detail::store_on(detail::axis_view<Axis, 0, s>(dst), detail::axis_view<Axis, n - s, s>(src).load(loc), loc);
            return dst.load(loc);
          },
          loc);
    }
  }
}

/// pltpu.bitcast on a Value: the same bytes as elements of U; the last
/// extent scales by sizeof(T) / sizeof(U) (as Ref::bitcast).
template <class U, class T, class E>
auto bitcast(const Value<T, E>& x, refx::source_location loc = refx::source_location::current()) {
  static_assert(detail::all_static_extents<E>(), "refx: bitcast<U> of a Value takes static extents");
  return run_scoped(
      [&](Ref<T, E, Vmem> tmp) {
        detail::store_on(tmp, x, loc);
        return tmp.template bitcast<U>(loc).load(loc);
      },
      loc);
}

/// pl.load(ref, mask=mask, other=other): ref's elements where `mask` holds,
/// `other` (a Value of the same shape, or a number) elsewhere.
template <class T, class E, class S, class F, class O>
auto load(const Ref<T, E, S>& ref, const Value<bool, F>& mask, const O& other,
          refx::source_location loc = refx::source_location::current()) {
  static_assert(std::is_same_v<E, F>,
                "refx: a masked load's mask has the Ref view's shape (a bool Value of its extents)");
  if constexpr (std::is_same_v<E, F>) return select(mask, ref.load(loc), other, loc);
  else return ref.load(loc);  // not reached: the check above failed to compile
}
/// pl.store(ref, v, mask=mask): writes v's elements where `mask` holds and
/// keeps ref's elsewhere (a load, a select and a store).
template <class T, class E, class S, class V, class F>
void store(const Ref<T, E, S>& ref, const V& v, const Value<bool, F>& mask,
           refx::source_location loc = refx::source_location::current()) {
  static_assert(std::is_same_v<E, F>,
                "refx: a masked store's mask has the Ref view's shape (a bool Value of its extents)");
  if constexpr (std::is_same_v<E, F>) detail::store_on(ref, select(mask, v, ref.load(loc), loc), loc);
}

}  // namespace refx
