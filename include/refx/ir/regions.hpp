#pragma once
// Whether two views of the same Ref may touch a common element. Exact for
// static starts along each dimension's arithmetic progression; conservative
// (may overlap) when a start is traced.

#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>

#include <refx/ir/graph.hpp>

namespace refx {

/// A view covering the whole of `ref`.
inline ViewId whole_view(Graph& g, ValueId ref) {
  const Shape& s = g.type(ref).shape;
  std::array<DimIndex, max_rank> dims{};
  for (std::size_t d = 0; d < s.rank() && d < max_rank; ++d) dims[d] = DimIndex{DynIndex{0, -1}, s[d], 1, false};
  return g.add_view(ref, std::span<const DimIndex>(dims.data(), s.rank()));
}

namespace detail {
/// Whether two progressions share an element: no, yes, or unknown (only when
/// the exact answer would overflow 64-bit arithmetic).
enum class Meet : std::uint8_t { no, yes, unknown };

/// The inverse of a modulo m (a and m coprime, m > 1), by extended Euclid.
inline std::int64_t inverse_mod(std::int64_t a, std::int64_t m) {
  std::int64_t t = 0, nt = 1, r = m, nr = a % m;
  while (nr != 0) {
    const std::int64_t q = r / nr;
    t = std::exchange(nt, t - q * nt);
    r = std::exchange(nr, r - q * nr);
  }
  return t < 0 ? t + m : t;
}

// Do {a0 + i*sa : 0 <= i < na} and {b0 + j*sb : 0 <= j < nb} intersect?
// Exact (Chinese remainder theorem): the common elements are one residue
// class modulo lcm(sa, sb); the smallest one >= both starts must not pass
// either end.
inline Meet progressions_relation(std::int64_t a0, std::int64_t sa, std::int64_t na, std::int64_t b0, std::int64_t sb,
                                  std::int64_t nb) {
  if (na <= 0 || nb <= 0) return Meet::no;
  if (na == 1) sa = 1;  // a single element: its stride says nothing
  if (nb == 1) sb = 1;
  const std::int64_t a1 = a0 + (na - 1) * sa, b1 = b0 + (nb - 1) * sb;
  const std::int64_t lo = std::max(a0, b0), hi = std::min(a1, b1);
  if (lo > hi) return Meet::no;
  const std::int64_t g = std::gcd(sa, sb);
  if ((b0 - a0) % g != 0) return Meet::no;
  const std::int64_t m = sb / g;  // x = a0 + sa * t with (sa / g) * t == (b0 - a0) / g (mod m)
  if (sa / g > std::numeric_limits<std::int64_t>::max() / sb) return Meet::unknown;
  const std::int64_t lcm = sa / g * sb;
  std::int64_t t = 0;
  if (m > 1) {
    if (m > 3037000499LL) return Meet::unknown;  // t's product below would overflow
    const std::int64_t r = (((b0 - a0) / g) % m + m) % m;
    t = r * inverse_mod((sa / g) % m, m) % m;
  }
  const std::int64_t x0 = a0 + sa * t;
  const std::int64_t x = lo + (((x0 - lo) % lcm) + lcm) % lcm;  // the smallest common element >= lo
  return x <= hi ? Meet::yes : Meet::no;
}

/// May the progressions meet? (Exact unless the arithmetic would overflow.)
inline bool progressions_meet(std::int64_t a0, std::int64_t sa, std::int64_t na, std::int64_t b0, std::int64_t sb,
                              std::int64_t nb) {
  return progressions_relation(a0, sa, na, b0, sb, nb) != Meet::no;
}
}  // namespace detail

inline bool views_may_overlap(const Graph& g, ViewId a, ViewId b) {
  const View &va = g.view(a), &vb = g.view(b);
  if (va.ref != vb.ref) return false;
  const auto da = g.dims(va), db = g.dims(vb);
  for (std::size_t d = 0; d < va.rank; ++d) {
    const DimIndex &x = da[d], &y = db[d];
    if (!x.start.is_static() || !y.start.is_static()) {
      if (x.start.value == y.start.value && x.start.constant == y.start.constant && x.stride == y.stride &&
          x.size == y.size)
        continue;  // the same traced start: same region along this dimension
      continue;    // unknown: may overlap
    }
    if (!detail::progressions_meet(x.start.constant, x.stride, x.size, y.start.constant, y.stride, y.size)) return false;
  }
  return true;
}

/// Whether views a and b provably share an element: static regions that
/// meet, or the same traced start along every dynamic dimension. (Unlike
/// views_may_overlap, an unknown relation counts as "no".)
inline bool views_surely_overlap(const Graph& g, ViewId a, ViewId b) {
  const View &va = g.view(a), &vb = g.view(b);
  if (va.ref != vb.ref) return false;
  const auto da = g.dims(va), db = g.dims(vb);
  for (std::size_t d = 0; d < va.rank; ++d) {
    const DimIndex &x = da[d], &y = db[d];
    if (!x.start.is_static() || !y.start.is_static()) {
      if (x.start.value == y.start.value && x.start.constant == y.start.constant && x.stride == y.stride &&
          x.size == y.size && x.size > 0)
        continue;
      return false;
    }
    if (detail::progressions_relation(x.start.constant, x.stride, x.size, y.start.constant, y.stride, y.size) !=
        detail::Meet::yes)
      return false;
  }
  return true;
}

}  // namespace refx
