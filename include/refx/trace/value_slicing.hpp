#pragma once
// Values cut, repeated, rotated and reinterpreted, and masked loads and
// stores, as published Pallas kernels write them:
//   tile<R0, R1>(x)                    jnp.tile(x, (R0, R1)): copies side by side
//   slice_in_dim<Axis, Start, Size>(x) x[..., Start:Start + Size, ...] along Axis
//                                      (lax.slice_in_dim; flash attention's l[:, :head_dim])
//   roll<Axis, Shift>(x)               jnp.roll(x, Shift, Axis) / pltpu.roll with a static shift
//   roll<Axis>(x, shift)               pltpu.roll with a shift read when the kernel runs
//   roll<Axis>(x, shift, roll_stride<A>(s))  pltpu.roll(..., stride=s, stride_axis=A)
//   bitcast<U>(x)                      pltpu.bitcast / lax.bitcast_convert_type on a Value
//   load(ref, mask, other)             pl.load(ref, mask=m, other=o): other where the mask is false
//   store(ref, v, mask)                pl.store(ref, v, mask=m): only where the mask is true
//   pack_elementwise<P>({x0, x1, ...}) pltpu.pack_elementwise(xs, packed_dtype=P): one u32 word
//                                      per element, x0 in the lowest bits
//   unpack_elementwise<P, U>(w, k)     pltpu.unpack_elementwise(w, index=k, packed_dtype=P, unpacked_dtype=U)
// tile is a broadcast and a reshape; the others go through a scoped Vmem
// buffer (a store and a load of views), as a TPU kernel's value slice is a
// copy between vector registers.

#include <cstddef>
#include <cstdint>
#include <type_traits>
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

/// The stride of pltpu.roll(..., stride=s, stride_axis=StrideAxis): slice i
/// along StrideAxis rolls by shift + i * s.
template <std::size_t StrideAxis>
struct RollStride {
  std::int64_t stride = 0;
};
template <std::size_t StrideAxis>
constexpr RollStride<StrideAxis> roll_stride(std::int64_t stride) {
  return {stride};
}

namespace detail {
/// A shift: an integer, or an int32 read when the kernel runs (a Scalar, or
/// an element of a Smem Ref: shift_ref[0]).
template <class S>
inline constexpr bool roll_shift_v = (std::is_integral_v<S> && !std::is_same_v<S, bool>) ||
                                     (!std::is_arithmetic_v<S> && std::is_convertible_v<S, Scalar<std::int32_t>>);
template <class S>
auto roll_shift(const S& shift) {
  if constexpr (std::is_integral_v<S>) return shift;
  else return Scalar<std::int32_t>(shift);
}

/// The extents E with dimension Axis doubled.
template <std::size_t Axis, class E, class Seq = std::make_index_sequence<E::rank>>
struct doubled;
template <std::size_t Axis, class E, std::size_t... I>
struct doubled<Axis, E, std::index_sequence<I...>> {
  using type = extents<(I == Axis ? 2 * E::values[I] : E::values[I])...>;
};
template <std::size_t Axis, class E>
using doubled_t = typename doubled<Axis, E>::type;

/// shift mod n, in [0, n): an integer stays one, a traced shift is traced.
template <class S>
auto roll_amount(const S& shift, std::int64_t n) {
  if constexpr (std::is_integral_v<S>) {
    return ((static_cast<std::int64_t>(shift) % n) + n) % n;
  } else {
    const auto m = static_cast<std::int32_t>(n);
    return ((shift % m) + m) % m;
  }
}

/// Dimension D of the window [start, start + N) along Axis, at `slice`
/// along StrideAxis (none when StrideAxis is the rank).
template <std::size_t D, std::size_t Axis, std::size_t StrideAxis, std::int64_t N, class Start>
auto window_index(const Start& start, std::int64_t slice) {
  if constexpr (D == Axis) return ds<N>(start);
  else if constexpr (D == StrideAxis) return ds<1>(slice);
  else return all;
}

/// x rolled by `shift` along Axis, slice i along StrideAxis by shift + i *
/// stride (no stride: StrideAxis == rank). x is stored twice, side by side
/// along Axis; the rolled values are the window n - (shift mod n) into it.
template <std::size_t Axis, std::size_t StrideAxis, class T, class E, class S>
auto roll_window(const Value<T, E>& x, const S& shift, std::int64_t stride, refx::source_location loc) {
  constexpr std::int64_t n = E::values[Axis];
  return run_scoped(
      [&](Ref<T, doubled_t<Axis, E>, Vmem> twice, Ref<T, E, Vmem> out) {
        store_on(axis_view<Axis, 0, n>(twice), x, loc);
        store_on(axis_view<Axis, n, n>(twice), x, loc);
        const auto window = [&](const auto& amount, std::int64_t slice) {
          return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return twice.at(window_index<I, Axis, StrideAxis, n>(n - amount, slice)...);
          }
          (std::make_index_sequence<E::rank>{});
        };
        if constexpr (StrideAxis < E::rank) {
          for (std::int64_t i = 0; i < E::values[StrideAxis]; ++i) {
            const auto amount = roll_amount(shift + static_cast<std::int32_t>(i * stride), n);
            const auto slice = [&]<std::size_t... I>(std::index_sequence<I...>) {
              return out.at(window_index<I, E::rank, StrideAxis, 0>(0, i)...);
            }
            (std::make_index_sequence<E::rank>{});
            store_on(slice, window(amount, i).load(loc), loc);
          }
        } else {
          store_on(out, window(roll_amount(shift, n), 0).load(loc), loc);
        }
        return out.load(loc);
      },
      loc);
}
}  // namespace detail

/// pltpu.roll(x, shift, axis=Axis) with a shift given as a value: an
/// integer, or a Scalar<std::int32_t> known when the kernel runs. Element i
/// moves to (i + shift) mod n along Axis.
template <std::size_t Axis, class T, class E, class S>
  requires detail::roll_shift_v<S>
auto roll(const Value<T, E>& x, const S& shift, refx::source_location loc = refx::source_location::current()) {
  static_assert(detail::all_static_extents<E>(), "refx: roll takes a Value of static extents");
  static_assert(Axis < E::rank, "refx: roll's axis is past the Value's rank");
  if constexpr (detail::all_static_extents<E>() && Axis < E::rank)
    return detail::roll_window<Axis, E::rank>(x, detail::roll_shift(shift), 0, loc);
}

/// pltpu.roll(x, shift, axis=Axis, stride=s, stride_axis=StrideAxis), as
/// roll_stride<StrideAxis>(s): slice i along StrideAxis rolls by
/// shift + i * s.
template <std::size_t Axis, std::size_t StrideAxis, class T, class E, class S>
  requires detail::roll_shift_v<S>
auto roll(const Value<T, E>& x, const S& shift, RollStride<StrideAxis> stride,
          refx::source_location loc = refx::source_location::current()) {
  static_assert(detail::all_static_extents<E>(), "refx: roll takes a Value of static extents");
  static_assert(Axis < E::rank && StrideAxis < E::rank, "refx: roll's axis is past the Value's rank");
  static_assert(Axis != StrideAxis, "refx: roll's stride axis must differ from the axis it rolls (as in Pallas)");
  if constexpr (detail::all_static_extents<E>() && Axis < E::rank && StrideAxis < E::rank && Axis != StrideAxis) {
    if (stride.stride < 0)
      trace_error(loc, hint("roll the other way by a larger shift"), "roll's stride is {}; it must be >= 0",
                  stride.stride);
    return detail::roll_window<Axis, StrideAxis>(x, detail::roll_shift(shift), stride.stride, loc);
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

/// A packed element type refx has no element type for (Pallas' int4, int16):
/// pack_elementwise<packed_int<4>>(...).
template <int Bits>
struct packed_int {};

namespace detail {
template <class P>
inline constexpr int packed_bits =
    std::is_same_v<P, bf16> || std::is_same_v<P, std::int8_t> || std::is_same_v<P, std::uint8_t>
        ? static_cast<int>(8 * sizeof(P))
        : 0;
template <int B>
inline constexpr int packed_bits<packed_int<B>> = B == 4 || B == 16 ? B : 0;
}  // namespace detail

/// pltpu.pack_elementwise(xs, packed_dtype=P): element i of the result holds
/// xs[k][i] narrowed to P in bits [k b, (k + 1) b), b being P's width and
/// xs[0] the lowest. f32 values narrow to bf16 (rounded to nearest even, as
/// cast<bf16>); 32-bit integers to 4, 8 or 16 bits (their low bits). There
/// are 32 / b of them.
template <class P, class T, class E, std::size_t N>
Value<std::uint32_t, E> pack_elementwise(const Value<T, E> (&xs)[N],
                                         refx::source_location loc = refx::source_location::current()) {
  constexpr int b = detail::packed_bits<P>;
  constexpr bool f32_to_bf16 = std::is_same_v<T, float> && std::is_same_v<P, bf16>;
  constexpr bool int_to_int =
      (std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t>)&&b > 0 && !std::is_same_v<P, bf16>;
  static_assert(f32_to_bf16 || int_to_int,
                "refx: pack_elementwise packs f32 into bf16, or i32 / u32 into std::int8_t, std::uint8_t or "
                "packed_int<4> / packed_int<16>");
  static_assert(b == 0 || N * b == 32,
                "refx: pack_elementwise takes 32 / (the packed width) values: 2 for bf16, 4 "
                "for 8-bit, 8 for packed_int<4>");
  if constexpr ((f32_to_bf16 || int_to_int) && N * b == 32) {
    Value<std::uint32_t, E> word = zeros<std::uint32_t>(xs[0].typed_shape(), loc);
    for (std::size_t k = 0; k < N; ++k) {
      Value<std::uint32_t, E> bits;
      if constexpr (f32_to_bf16) {  // the bf16's bits: the upper half of the f32 it widens back to
        bits = shift_right_logical(bitcast<std::uint32_t>(cast<float>(cast<bf16>(xs[k], loc), loc), loc), 16);
      } else {
        bits = bitcast<std::uint32_t>(xs[k], loc) & static_cast<std::uint32_t>((std::uint64_t{1} << b) - 1);
      }
      word = word | shift_left(bits, static_cast<std::uint32_t>(k * b));
    }
    return word;
  } else {
    return Value<std::uint32_t, E>();  // not reached: a check above failed to compile
  }
}

/// pltpu.unpack_elementwise(w, index=k, packed_dtype=P, unpacked_dtype=U):
/// the k-th P of each 32-bit word of `w`, as U: bf16 widened to f32, or the
/// integer sign-extended to i32 (zero-extended to u32).
template <class P, class U, class T, class E>
Value<U, E> unpack_elementwise(const Value<T, E>& w, int index,
                               refx::source_location loc = refx::source_location::current()) {
  constexpr int b = detail::packed_bits<P>;
  constexpr bool bf16_to_f32 = std::is_same_v<P, bf16> && std::is_same_v<U, float>;
  constexpr bool int_to_int =
      b > 0 && !std::is_same_v<P, bf16> && (std::is_same_v<U, std::int32_t> || std::is_same_v<U, std::uint32_t>);
  static_assert(sizeof(T) == 4 && !std::is_same_v<T, float>,
                "refx: unpack_elementwise takes the u32 / i32 words pack_elementwise makes");
  static_assert(bf16_to_f32 || int_to_int,
                "refx: unpack_elementwise unpacks bf16 into f32, or std::int8_t, std::uint8_t, packed_int<4> / "
                "packed_int<16> into i32 or u32");
  if constexpr (sizeof(T) == 4 && !std::is_same_v<T, float> && (bf16_to_f32 || int_to_int)) {
    if (index < 0 || index >= 32 / b)
      trace_error(loc, "unpack_elementwise: index {} is out of range: a word holds {} values of {} bits", index, 32 / b,
                  b);
    const Value<std::uint32_t, E> u = bitcast<std::uint32_t>(w, loc);
    // The value's bits at the top of the word, then shifted down (filling in the sign for i32).
    const auto top = shift_left(u, static_cast<std::uint32_t>(32 - (index + 1) * b));
    if constexpr (bf16_to_f32) return bitcast<float>(top & 0xFFFF0000u, loc);
    else if constexpr (std::is_same_v<U, std::int32_t>)
      return shift_right_arithmetic(bitcast<std::int32_t>(top, loc), 32 - b);
    else return shift_right_logical(top, static_cast<std::uint32_t>(32 - b));
  } else {
    return Value<U, E>();  // not reached: a check above failed to compile
  }
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
