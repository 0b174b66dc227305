#pragma once
// `ds(start, size[, stride])`: a slice of one dimension. The start may be a
// traced scalar; the size and stride are static.

#include <cstdint>
#include <type_traits>

#include <refx/core/detail/checked_args.hpp>
#include <refx/core/error.hpp>

namespace refx {

/// An index that is either a constant or a traced scalar (by value id).
struct DynIndex {
  std::int64_t constant = 0;
  std::int32_t value = -1;  ///< id of a traced i32/i64 scalar, or -1 for a constant

  constexpr bool is_static() const noexcept { return value < 0; }
};

/// A slice of `size` elements from `start`, every `stride`-th.
struct Slice {
  DynIndex start;
  std::int64_t size = 0;
  std::int64_t stride = 1;
};

/// Slice of `size` elements starting at `start`, stepping `stride` (>= 1).
constexpr Slice ds(std::int64_t start, std::int64_t size, std::int64_t stride = 1) {
  if (size < 0) throw ArgumentError("refx: ds size must be >= 0");
  if (stride < 1) throw ArgumentError("refx: ds stride must be >= 1");
  return Slice{DynIndex{start, -1}, size, stride};
}

/// ds with a floating-point start, size or stride: rejected (it would be
/// truncated to a different slice).
template <class A, class B, class... C>
  requires(sizeof...(C) <= 1 &&
           (std::is_floating_point_v<A> || std::is_floating_point_v<B> || (std::is_floating_point_v<C> || ...)))
constexpr Slice ds(const A&, const B&, const C&...) {
  static_assert(detail::dependent_false<A>,
                "refx: ds(start, size[, stride]) takes integers (the start may be a Scalar<std::int32_t>); a "
                "floating-point number would be truncated; convert it explicitly with static_cast<std::int64_t>(...)");
  return {};
}

}  // namespace refx
