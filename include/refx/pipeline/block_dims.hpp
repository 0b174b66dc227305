#pragma once
// A BlockSpec's block dimensions and what its index map returns
// (pipeline/operands.hpp describes an operand with them):
//   squeezed, element(n), bounded_slice(n)  block extents other than a size
//                                           (Pallas' None, pl.Element(n),
//                                           pl.BoundedSlice(n))
//   bounded(start, size)                    a bounded slice's index
// and, in detail, how an index map's results become block indices and why
// a map cannot be called with a grid's indices (each a static_assert of
// describe()).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <refx/config.hpp>
#include <refx/trace/value.hpp>

namespace refx {

/// A BlockSpec extent that squeezes its dimension (Pallas' `None` /
/// `pl.squeezed`): the block is one element thick there, the body's block
/// drops the dimension, and the index map's index along it is an element
/// index. `block<squeezed, 128, 64>(map)` gives the body a (128, 64) block.
inline constexpr std::int64_t squeezed = -1;

namespace detail {
/// How element(n) and bounded_slice(n) are written among block extents.
inline constexpr std::int64_t element_tag = std::int64_t{1} << 40;
}  // namespace detail

/// A BlockSpec extent indexed by element (Pallas' `pl.Element(n)`): the
/// block is n elements thick there and the index map returns the element
/// it starts at, not a block index, so blocks may overlap or start
/// anywhere. `block<element(128), 64>(map)` gives the body (128, 64) blocks
/// whose first row is the map's first index. The block lies inside the
/// array (no padding: Pallas' `padding=` has no counterpart).
constexpr std::int64_t element(std::int64_t n) { return n >= 1 ? -detail::element_tag - n : 0; }

/// A BlockSpec extent for a slice of at most n elements (Pallas'
/// `pl.BoundedSlice(n)`): the index map returns bounded(start, size)
/// there. The body's block is n elements thick and starts at `start`; its
/// first `size` elements are the slice, the rest the array's next elements
/// or, past its end, poison (refx copies n elements, Pallas `size`: what
/// lies past the slice is unspecified in both). A start outside the array
/// or a size outside [0, n] stops the run (or the trace), naming the operand
/// and the step.
constexpr std::int64_t bounded_slice(std::int64_t n) { return n >= 1 ? -2 * detail::element_tag - n : 0; }

namespace detail {
/// A block extent as copied: a squeezed dimension is one element thick, an
/// element(n) or bounded_slice(n) one n.
constexpr std::int64_t copied_extent(std::int64_t b) {
  return b == squeezed ? 1 : b <= -2 * element_tag ? -2 * element_tag - b : b < 0 ? -element_tag - b : b;
}
/// Whether the index map's index along a dimension of extent `b` is an
/// element (squeezed, element(n), bounded_slice(n)) rather than a block index.
constexpr bool indexed_by_element(std::int64_t b) { return b < 0; }
/// Whether block extent `b` is a bounded_slice(n).
constexpr bool is_bounded_slice(std::int64_t b) { return b <= -2 * element_tag; }

template <class X>
DynIndex to_dyn_index(const X& x) {
  if constexpr (std::is_integral_v<X>) return DynIndex{static_cast<std::int64_t>(x), -1};
  else {
    static_assert(is_scalar_value_v<X> && std::is_integral_v<typename X::element_type>,
                  "refx: an index map returns integers or traced integer scalars (Scalar<std::int32_t>)");
    return DynIndex{0, x.id()};
  }
}
}  // namespace detail

/// A bounded_slice(n) dimension's index: the slice [start, start + size),
/// size <= n (Pallas' pl.ds(start, size) there). Integers or traced
/// integer scalars each.
struct BoundedIndex {
  DynIndex start;
  DynIndex size;
};
template <class S, class Z>
BoundedIndex bounded(const S& start, const Z& size) {
  return {detail::to_dyn_index(start), detail::to_dyn_index(size)};
}

namespace detail {
/// `i` as a traced scalar of element type `to` (a constant, or a cast).
inline ValueId index_as(const DynIndex& i, DType to, SourceLoc loc) {
  if (!i.is_static()) {
    if (Tracer::current(loc).graph().type(i.value).dtype == to) return i.value;
    const std::int64_t attrs[] = {static_cast<std::int64_t>(to)};
    return apply(prim::cast, {i.value}, attrs, loc);
  }
  return visit_dtype(to, [&](auto tag) -> ValueId {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>)
      return constant<I>(static_cast<I>(i.constant), Shape{}, loc);
    else return no_id;  // not reached: block indices are integers (to_dyn_index)
  });
}

/// The integer `c` as a constant of traced index `like`'s element type.
inline ValueId index_like(std::int64_t c, ValueId like, SourceLoc loc) {
  return index_as(DynIndex{c, -1}, Tracer::current(loc).graph().type(like).dtype, loc);
}

/// Entry d of what an index map returns: its block index (a bounded
/// slice's start). A bounded slice's size is checked against its bound
/// (block extent `extent`, a bounded_slice(n)): at run time when traced.
/// `where()` names the operand and the step for the messages.
template <class X, class F>
DynIndex block_index_entry(const X& x, std::size_t d, std::int64_t extent, const F& where, SourceLoc loc) {
  const std::int64_t n = copied_extent(extent);
  if constexpr (std::is_same_v<X, BoundedIndex>) {
    if (!is_bounded_slice(extent))
      trace_error(loc,
                  "{}: the index map returns bounded(start, size) along dimension {}, whose block extent is "
                  "not a bounded_slice(n)",
                  where(), d);
    if (x.size.is_static() && (x.size.constant < 0 || x.size.constant > n))
      trace_error(loc, "{}: the index map's bounded slice along dimension {} has size {}, outside [0, {}]", where(), d,
                  x.size.constant, n);
    if (!x.size.is_static()) {
      Tracer& t = Tracer::current(loc);
      const std::int64_t attrs[] = {
          0, 1, 1, n + 1,
          t.graph().add_string(fmt::format(
              "{}: the index map's bounded slice size along dimension {} lies outside [0, {}]", where(), d, n))};
      const ValueId v = x.size.value;
      const ValueId checked = t.bind1(prim::index_check, std::span<const ValueId>(&v, 1), {}, attrs, loc);
      // The start carries checked - size (0), so that the check is not dropped as unused.
      const ValueId zero = apply(prim::sub, {checked, v}, {}, loc);
      const DType type = x.start.is_static() ? t.graph().type(v).dtype : t.graph().type(x.start.value).dtype;
      const ValueId offset = index_as(DynIndex{0, zero}, type, loc);
      return DynIndex{0, apply(prim::add, {index_as(x.start, type, loc), offset}, {}, loc)};
    }
    return x.start;
  } else {
    if (is_bounded_slice(extent))
      trace_error(loc, "{}: dimension {} is a bounded_slice({}): its index map returns bounded(start, size) there",
                  where(), d, n);
    return to_dyn_index(x);
  }
}
/// The block index tuple an index map returns, as one DynIndex per
/// dimension (block extents `extents`; block_index_entry).
template <std::size_t N, class Ret, class F>
std::vector<DynIndex> block_indices(const Ret& r, const std::array<std::int64_t, N>& extents, const F& where,
                                    SourceLoc loc) {
  if constexpr (std::is_integral_v<Ret> || is_value_v<Ret> || std::is_same_v<Ret, BoundedIndex>) {
    static_assert(N == 1,
                  "refx: an index map returns one block index per dimension of its operand; this one "
                  "returns a single index for an operand of rank > 1");
    return {block_index_entry(r, 0, extents[0], where, loc)};
  } else {
    static_assert(std::tuple_size_v<Ret> == N,
                  "refx: an index map returns one block index per dimension of its operand (a std::array or "
                  "std::tuple of that size)");
    return [&]<std::size_t... D>(std::index_sequence<D...>) {
      return std::vector<DynIndex>{block_index_entry(std::get<D>(r), D, extents[D], where, loc)...};
    }
    (std::make_index_sequence<N>{});
  }
}

/// Whether `map` can be called with one grid index (std::int64_t) per I,
/// then the scalar operands (`Scalars`, a std::tuple of Smem Refs).
template <class Map, class Scalars, class Seq>
struct map_invocable;
template <class Map, class... S, std::size_t... I>
struct map_invocable<Map, std::tuple<S...>, std::index_sequence<I...>>
    : std::bool_constant<std::is_invocable_v<const Map&, decltype((void)I, std::int64_t{})..., const S&...>> {};
template <class Map, class Scalars = std::tuple<>, std::size_t... I>
constexpr bool takes_grid_indices(std::index_sequence<I...>) {
  return map_invocable<Map, Scalars, std::index_sequence<I...>>::value;
}
/// An index map that cannot be called with R grid indices: whether it takes
/// another number of them (a function whose call type is known, or a generic
/// one that another count of 0 to 4 fits), rather than failing to compile
/// for them (no return type could be deduced: the error is in its body).
template <class Map, std::size_t R, class Scalars = std::tuple<>>
constexpr bool takes_other_grid_index_count() {
  if constexpr (requires { &Map::operator(); }) {
    return true;
  } else {
    return []<std::size_t... K>(std::index_sequence<K...>) {
      return ((K != R && takes_grid_indices<Map, Scalars>(std::make_index_sequence<K>{})) || ...);
    }
    (std::make_index_sequence<5>{});
  }
}

/// Whether `map`, a function whose call type is known (not generic: no body
/// is compiled for the question), takes the scalar operands first and then
/// R grid indices: Pallas' `lambda i, table: ...` ported as (table, i).
template <class Map, class Scalars, class Seq>
struct map_takes_scalars_first;
template <class Map, class... S, std::size_t... I>
struct map_takes_scalars_first<Map, std::tuple<S...>, std::index_sequence<I...>>
    : std::bool_constant<std::is_invocable_v<const Map&, const S&..., decltype((void)I, std::int64_t{})...>> {};
template <class Map, std::size_t R, class Scalars>
constexpr bool takes_scalars_before_grid_indices() {
  if constexpr (std::tuple_size_v<Scalars> == 0) {
    return false;
  } else if constexpr (requires { &Map::operator(); } || std::is_function_v<std::remove_pointer_t<Map>>) {
    return map_takes_scalars_first<Map, Scalars, std::make_index_sequence<R>>::value;
  } else {
    return false;
  }
}
/// Whether `map` can be called with one traced grid index
/// (Scalar<std::int32_t>) per I, then the scalar operands: the form a rolled
/// grid calls (rolls(), pipeline/rolled.hpp, asks it before an automatic grid
/// is traced, so describe() asking it compiles no map body anew).
template <class Map, class Scalars, class Seq>
struct map_takes_traced;
template <class Map, class... S, std::size_t... I>
struct map_takes_traced<Map, std::tuple<S...>, std::index_sequence<I...>>
    : std::bool_constant<
          std::is_invocable_v<const Map&, decltype((void)I, std::declval<Scalar<std::int32_t>>())..., const S&...>> {};

/// Why an index map cannot be called with R grid indices (std::int64_t),
/// then the scalar operands; one static_assert of describe() each.
enum class IndexMapFault { none, scalars_first, grid_index_count, traced_only, body };
template <class Map, std::size_t R, class Scalars>
constexpr IndexMapFault index_map_fault() {
  if constexpr (takes_grid_indices<Map, Scalars>(std::make_index_sequence<R>{})) {
    return IndexMapFault::none;
  } else if constexpr (takes_scalars_before_grid_indices<Map, R, Scalars>()) {
    return IndexMapFault::scalars_first;
  } else if constexpr (takes_other_grid_index_count<Map, R, Scalars>()) {
    return IndexMapFault::grid_index_count;
  } else if constexpr (map_takes_traced<Map, Scalars, std::make_index_sequence<R>>::value) {
    return IndexMapFault::traced_only;
  } else {
    return IndexMapFault::body;
  }
}

}  // namespace detail
}  // namespace refx
