#pragma once
// Whether two views of the same Ref may touch a common element. Exact for
// static starts along each dimension's arithmetic progression; conservative
// (may overlap) when a start is traced.

#include <numeric>

#include <refx/ir/graph.hpp>

namespace refx {

/// A view covering the whole of `ref`.
inline ViewId whole_view(Graph& g, ValueId ref) {
  const Shape& s = g.type(ref).shape;
  std::array<DimIndex, max_rank> dims{};
  for (std::size_t d = 0; d < s.rank(); ++d) dims[d] = DimIndex{DynIndex{0, -1}, s[d], 1, false};
  return g.add_view(ref, std::span<const DimIndex>(dims.data(), s.rank()));
}

namespace detail {
// Do {a0 + i*sa : 0 <= i < na} and {b0 + j*sb : 0 <= j < nb} intersect?
inline bool progressions_meet(std::int64_t a0, std::int64_t sa, std::int64_t na, std::int64_t b0, std::int64_t sb,
                              std::int64_t nb) {
  if (na == 0 || nb == 0) return false;
  const std::int64_t a1 = a0 + (na - 1) * sa, b1 = b0 + (nb - 1) * sb;
  const std::int64_t lo = std::max(a0, b0), hi = std::min(a1, b1);
  if (lo > hi) return false;
  const std::int64_t g = std::gcd(sa, sb);
  if ((b0 - a0) % g != 0) return false;
  if (na * nb <= 4096) {  // small: exact by enumeration of the shorter one
    const bool a_short = na <= nb;
    const std::int64_t s0 = a_short ? a0 : b0, ss = a_short ? sa : sb, sn = a_short ? na : nb;
    const std::int64_t l0 = a_short ? b0 : a0, ls = a_short ? sb : sa, ln = a_short ? nb : na;
    for (std::int64_t i = 0; i < sn; ++i) {
      const std::int64_t x = s0 + i * ss;
      if (x >= l0 && x <= l0 + (ln - 1) * ls && (x - l0) % ls == 0) return true;
    }
    return false;
  }
  return true;
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

}  // namespace refx
