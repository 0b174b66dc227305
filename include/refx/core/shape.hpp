#pragma once
// Shapes: static extents in types (`extents<8, dyn>`) and run-time `Shape`s.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/config.hpp>
#include <refx/core/error.hpp>

namespace refx {

/// Marks an extent that is only known when the kernel is traced.
inline constexpr std::int64_t dyn = -1;

/// The largest rank a Ref or Value may have.
inline constexpr std::size_t max_rank = 6;

/// Static extents of a Ref or Value type; `dyn` for an extent known at trace time.
template <std::int64_t... E>
struct extents {
  static constexpr std::size_t rank = sizeof...(E);
  static constexpr std::array<std::int64_t, rank> values{E...};
  static_assert(rank <= max_rank, "refx: at most 6 dimensions are supported");
  static_assert(((E >= 0 || E == dyn) && ...), "refx: an extent must be >= 0 or refx::dyn");
};

template <class T>
struct is_extents : std::false_type {};
template <std::int64_t... E>
struct is_extents<extents<E...>> : std::true_type {};

/// Two static extents agree when every pair is equal or one side is dyn.
template <class A, class B>
inline constexpr bool extents_compatible = [] {
  if constexpr (A::rank != B::rank) {
    return false;
  } else {
    for (std::size_t i = 0; i < A::rank; ++i)
      if (A::values[i] != dyn && B::values[i] != dyn && A::values[i] != B::values[i]) return false;
    return true;
  }
}();

namespace detail {
template <class A, class B, std::size_t... I>
auto merge_extents(std::index_sequence<I...>) -> extents<(A::values[I] != dyn ? A::values[I] : B::values[I])...>;
template <class E, std::size_t... I>
auto all_dyn(std::index_sequence<I...>) -> extents<((void)I, dyn)...>;
}  // namespace detail

namespace detail {
// One dimension of two broadcast operands: equal extents, 1 on one side
// (stretched to the other), or refx::dyn on one side (checked when traced).
constexpr bool broadcast_dim_ok(std::int64_t a, std::int64_t b) { return a == b || a == 1 || b == 1 || a == dyn || b == dyn; }
constexpr std::int64_t broadcast_dim(std::int64_t a, std::int64_t b) {
  return a == b ? a : a == 1 ? b : b == 1 ? a : a == dyn ? b : a;
}
template <class A, class B, std::size_t... I>
auto broadcast_extents(std::index_sequence<I...>) -> extents<broadcast_dim(A::values[I], B::values[I])...>;
}  // namespace detail

/// Whether static extents `A` and `B` broadcast together as lax does after
/// explicit rank alignment: equal ranks (or one side a scalar), and in each
/// dimension equal extents or 1 on one side (or refx::dyn, checked when traced).
template <class A, class B>
inline constexpr bool extents_broadcast = [] {
  if constexpr (A::rank == 0 || B::rank == 0) {
    return true;
  } else if constexpr (A::rank != B::rank) {
    return false;
  } else {
    for (std::size_t i = 0; i < A::rank; ++i)
      if (!detail::broadcast_dim_ok(A::values[i], B::values[i])) return false;
    return true;
  }
}();

namespace detail {
template <class A, class B, bool Scalar = (A::rank == 0 || B::rank == 0), bool Ok = extents_broadcast<A, B>>
struct broadcast_extents_impl {
  using type = A;  // not broadcastable: the caller's static_assert says why
};
template <class A, class B>
struct broadcast_extents_impl<A, B, true, true> {
  using type = std::conditional_t<A::rank == 0, B, A>;
};
template <class A, class B>
struct broadcast_extents_impl<A, B, false, true> {
  using type = decltype(broadcast_extents<A, B>(std::make_index_sequence<A::rank>{}));
};
}  // namespace detail

/// The extents of the result of an elementwise op over operands of extents
/// `A` and `B` (extents_broadcast<A, B> must hold).
template <class A, class B>
using broadcast_extents_t = typename detail::broadcast_extents_impl<A, B>::type;

/// The more static of two compatible extents.
template <class A, class B>
using merge_extents_t = decltype(detail::merge_extents<A, B>(std::make_index_sequence<A::rank>{}));

template <std::size_t Rank>
using dyn_extents = decltype(detail::all_dyn<void>(std::make_index_sequence<Rank>{}));

/// A run-time shape: rank and extents, stored inline.
class Shape {
 public:
  constexpr Shape() = default;
  constexpr Shape(std::initializer_list<std::int64_t> dims) {
    if (dims.size() > max_rank) throw ArgumentError("refx: at most 6 dimensions are supported");
    for (auto d : dims) dims_[rank_++] = d;
  }
  constexpr explicit Shape(std::span<const std::int64_t> dims) {
    if (dims.size() > max_rank) throw ArgumentError("refx: at most 6 dimensions are supported");
    for (auto d : dims) dims_[rank_++] = d;
  }

  constexpr std::size_t rank() const noexcept { return rank_; }
  constexpr std::int64_t operator[](std::size_t i) const noexcept { return dims_[i]; }
  constexpr std::int64_t& operator[](std::size_t i) noexcept { return dims_[i]; }
  constexpr std::span<const std::int64_t> dims() const noexcept { return {dims_.data(), rank_}; }
  constexpr const std::int64_t* begin() const noexcept { return dims_.data(); }
  constexpr const std::int64_t* end() const noexcept { return dims_.data() + rank_; }

  constexpr std::int64_t num_elements() const noexcept {
    std::int64_t n = 1;
    for (std::size_t i = 0; i < rank_; ++i) n *= dims_[i];
    return n;
  }
  constexpr void push_back(std::int64_t d) {
    if (rank_ == max_rank) throw ArgumentError("refx: at most 6 dimensions are supported");
    dims_[rank_++] = d;
  }
  constexpr Shape without(std::size_t axis) const {
    Shape s;
    for (std::size_t i = 0; i < rank_; ++i)
      if (i != axis) s.push_back(dims_[i]);
    return s;
  }
  friend constexpr bool operator==(const Shape& a, const Shape& b) noexcept {
    return std::ranges::equal(a.dims(), b.dims());
  }

  /// Row-major strides in elements.
  constexpr std::array<std::int64_t, max_rank> strides() const noexcept {
    std::array<std::int64_t, max_rank> s{};
    std::int64_t acc = 1;
    for (std::size_t i = rank_; i-- > 0;) {
      s[i] = acc;
      acc *= dims_[i];
    }
    return s;
  }

 private:
  std::array<std::int64_t, max_rank> dims_{};
  std::size_t rank_ = 0;
};

/// A shape whose static extents `E` are known to the type system.
template <class E>
struct TypedShape {
  using extents_type = E;
  Shape shape;
};

/// The shape of a fully static extents type.
template <class E>
constexpr Shape static_shape() {
  Shape s;
  for (auto d : E::values) s.push_back(d);
  return s;
}

}  // namespace refx

template <>
struct fmt::formatter<refx::Shape> : fmt::formatter<std::string_view> {
  format_context::iterator format(const refx::Shape& s, format_context& ctx) const;
};

#if REFX_DEFINITIONS
REFX_DECL fmt::format_context::iterator fmt::formatter<refx::Shape>::format(const refx::Shape& s,
                                                                            format_context& ctx) const {
  return fmt::formatter<std::string_view>::format(fmt::format("[{}]", fmt::join(s.dims(), ",")),
                                                  ctx);  // see SourceLoc's
}
#endif  // REFX_DEFINITIONS
