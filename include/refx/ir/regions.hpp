#pragma once
// The region algebra of views, the one every layer uses (the tracer, the
// passes, the collectives): whether two views of a Ref may share an element
// (may_overlap: conservative), certainly do (must_overlap), whether one
// covers another, whether two are the same region. Exact for static starts
// along each dimension's arithmetic progression; a traced start is known
// only by its identity (the same traced value) or when a view spans the
// whole dimension.

#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>

#include <refx/ir/graph.hpp>
#include <refx/ir/view_access.hpp>

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

/// Two starts that are the same number or the same traced value.
inline bool same_start(const DynIndex& a, const DynIndex& b) noexcept {
  return a.value == b.value && a.constant == b.constant;
}
}  // namespace detail

/// May views `a` and `b` share an element? Conservative (traced starts may
/// overlap). `no_id` stands for the whole Ref.
inline bool may_overlap(const Graph& g, ViewId a, ViewId b) {
  if (a == no_id || b == no_id) return true;
  const View &va = g.view(a), &vb = g.view(b);
  if (va.ref != vb.ref) return false;
  const auto da = g.dims(va), db = g.dims(vb);
  for (std::size_t d = 0; d < va.rank; ++d) {
    const DimIndex &x = da[d], &y = db[d];
    if (!x.start.is_static() || !y.start.is_static()) continue;
    if (x.size == 0 || y.size == 0) return false;
    const std::int64_t x1 = x.start.constant + (x.size - 1) * x.stride, y1 = y.start.constant + (y.size - 1) * y.stride;
    if (x1 < y.start.constant || y1 < x.start.constant) return false;
    if (x.stride == 1 && y.stride == 1) continue;
    if (!detail::progressions_meet(x.start.constant, x.stride, x.size, y.start.constant, y.stride, y.size))
      return false;
  }
  return true;
}

/// Do views `a` and `b` certainly share an element? Exact for static starts.
/// A traced start counts only when `same_values` says traced values are the
/// same at both ops (not across a loop iteration or across devices), and
/// then when both views use the same traced value or one of them spans the
/// whole dimension (every in-bounds window meets it; bounds are checked at
/// run time). Across devices a whole-dimension view does not count: which
/// devices run an op may depend on traced values too (a ring's chunk of one
/// row is sent by one device only).
inline bool must_overlap(const Graph& g, ViewId a, ViewId b, bool same_values) {
  const View &va = g.view(a), &vb = g.view(b);
  if (va.ref != vb.ref) return false;
  const auto da = g.dims(va), db = g.dims(vb);
  const Shape& extent = g.type(va.ref).shape;
  for (std::size_t d = 0; d < va.rank; ++d) {
    const DimIndex &x = da[d], &y = db[d];
    if (x.size == 0 || y.size == 0) return false;
    // Size equal to the extent, stride 1: the start can only be 0.
    const auto whole = [&](const DimIndex& i) { return i.size == extent[d] && (i.stride == 1 || i.size == 1); };
    if (same_values && (whole(x) || whole(y))) continue;
    if (x.start.is_static() && y.start.is_static()) {
      if (!detail::progressions_meet(x.start.constant, x.stride, x.size, y.start.constant, y.stride, y.size))
        return false;
    } else if (!(same_values && detail::same_start(x.start, y.start))) {
      return false;
    }
  }
  return true;
}

/// Does view `outer` certainly contain every element of view `inner`? (Both
/// static, or `outer` is the whole Ref.)
inline bool covers(const Graph& g, ViewId outer, ViewId inner) {
  if (outer == no_id || outer == inner) return true;
  if (inner == no_id) return false;
  const View &vo = g.view(outer), &vi = g.view(inner);
  if (vo.ref != vi.ref) return false;
  const auto dout = g.dims(vo), din = g.dims(vi);
  for (std::size_t d = 0; d < vo.rank; ++d) {
    const DimIndex &o = dout[d], &i = din[d];
    if (i.size == 0) return true;
    if (detail::same_start(o.start, i.start) && o.size == i.size && o.stride == i.stride) continue;
    if (!o.start.is_static() || !i.start.is_static() || o.size == 0) return false;
    const std::int64_t o0 = o.start.constant, o1 = o0 + (o.size - 1) * o.stride;
    const std::int64_t i0 = i.start.constant, i1 = i0 + (i.size - 1) * i.stride;
    if (i0 < o0 || i1 > o1 || (i0 - o0) % o.stride != 0) return false;
    if (i.size > 1 && i.stride % o.stride != 0) return false;
  }
  return true;
}

/// Do two views designate exactly the same elements in the same order?
inline bool same_region(const Graph& g, ViewId a, ViewId b) {
  if (a == b) return true;
  const View &va = g.view(a), &vb = g.view(b);
  if (va.ref != vb.ref || va.rank != vb.rank) return false;
  // Equal footprints presented differently (Ref::reshape / bitcast) are not
  // the same elements in the same order.
  const ViewLayout *la = g.layout(va), *lb = g.layout(vb);
  if ((la == nullptr) != (lb == nullptr) || (la != nullptr && (la->dtype != lb->dtype || !(la->shape == lb->shape))))
    return false;
  const auto da = g.dims(va), db = g.dims(vb);
  for (std::size_t d = 0; d < va.rank; ++d)
    if (!detail::same_start(da[d].start, db[d].start) || da[d].size != db[d].size ||
        (da[d].size > 1 && da[d].stride != db[d].stride) || da[d].squeezed != db[d].squeezed)
      return false;
  return true;
}

/// The strides, in its Ref's elements, of view `v`'s footprint (its dims,
/// whatever layout presents them; squeezed dimensions dropped).
inline std::array<std::int64_t, max_rank> footprint_strides(const Graph& g, ViewId v) {
  const View& view = g.view(v);
  const auto base_strides = g.type(view.ref).shape.strides();
  std::array<std::int64_t, max_rank> strides{};
  std::size_t k = 0;
  for (std::size_t d = 0; d < view.rank; ++d)
    if (const DimIndex& di = g.dims(view)[d]; !di.squeezed) strides[k++] = di.stride * base_strides[d];
  return strides;
}

/// Is the footprint of view `v` one dense run of its Ref's elements?
inline bool footprint_is_dense(const Graph& g, ViewId v) {
  return is_dense_run(g.footprint_shape(v).dims(), footprint_strides(g, v).data());
}

/// The flat element index of a view with static starts (a semaphore in an
/// array), or -1 when a start is traced.
inline std::int64_t static_offset(const Graph& g, ViewId v) {
  const View& view = g.view(v);
  const auto strides = g.type(view.ref).shape.strides();
  std::int64_t off = 0;
  const auto dims = g.dims(view);
  for (std::size_t d = 0; d < view.rank; ++d) {
    if (!dims[d].start.is_static()) return -1;
    off += dims[d].start.constant * strides[d];
  }
  return off;
}

}  // namespace refx
