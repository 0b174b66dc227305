#pragma once
// The definitions of passes/cost.hpp, included at its end in
// REFX_DEFINITIONS builds (docs/targets.md, "Cost of one op").

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

#include <refx/core/error.hpp>
#include <refx/ir/attrs.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>

namespace refx {

namespace detail {
inline double padded(std::int64_t n, std::int64_t to) { return static_cast<double>((n + to - 1) / to * to); }

inline OpCost dot_cost(const Graph& g, const Op& op, const Target& t) {
  const Shape a = g.type(g.inputs(op)[0]).shape, b = g.type(g.inputs(op)[1]).shape;
  const auto attrs = g.attrs(op);
  const bool trans_b = attrs.size() > 1 && (attrs[1] & prim::dot_trans_b) != 0;
  const std::int64_t m = a[0], k = a[1], n = trans_b ? b[0] : b[1];
  OpCost c{OpCost::Unit::matrix, 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n)};
  const MatmulRate* rate = t.matmul_rate(g.type(g.inputs(op)[0]).dtype);
  if (rate == nullptr || rate->ops_per_second <= 0) {
    c.known = false;
    return c;
  }
  // The unit takes 8 rows of the left operand against a mxu_dim x mxu_dim
  // tile of the right one: a smaller shape costs as much as the padded one.
  c.seconds = 2.0 * padded(m, 8) * padded(k, t.mxu_dim) * padded(n, t.mxu_dim) / rate->ops_per_second;
  return c;
}

inline double view_bytes(const Graph& g, ViewId v) {
  return static_cast<double>(g.view_elements(v)) * static_cast<double>(size_of(g.view_dtype(v)));
}
}  // namespace detail

REFX_DECL OpCost passes::op_cost(const Graph& g, OpId o, const Target& t) {
  const Op& op = g.op(o);
  if (op.prim == &prim::dot) return detail::dot_cost(g, op, t);
  if (op.prim == &prim::delay) {  // the time it asks for, on any target
    const auto ns = static_cast<double>(g.attrs(op)[0]);
    return {OpCost::Unit::none, ns, ns * 1e-9};
  }
  if (op.prim == &prim::dma_start) {
    const ViewId src = g.views(op)[0], dst = g.views(op)[1];
    const double bytes = detail::view_bytes(g, src);
    if (prim::dma_start_attrs(g, op).remote) return {OpCost::Unit::ici, bytes, bytes / t.ici.link_rate()};
    const bool hbm =
        g.type(g.view(src).ref).space == MemorySpace::hbm || g.type(g.view(dst).ref).space == MemorySpace::hbm;
    if (!hbm) return {OpCost::Unit::none, bytes, 0, false};  // Vmem <-> Vmem: no published figure
    return {OpCost::Unit::hbm, bytes, bytes / t.hbm_bytes_per_second};
  }
  const bool reduce = op.prim == &prim::reduce_sum || op.prim == &prim::reduce_max || op.prim == &prim::reduce_min;
  if (op.prim->elementwise != nullptr || reduce || op.prim == &prim::fused) {
    std::int64_t elements = 0;
    for (ValueId v : g.inputs(op)) elements = std::max(elements, g.type(v).shape.num_elements());
    for (ValueId v : g.outputs(op)) elements = std::max(elements, g.type(v).shape.num_elements());
    OpCost c{OpCost::Unit::vector, static_cast<double>(elements)};
    // A fused chain runs several operations per element, how many is not counted here.
    c.known = t.vector_ops_per_second > 0 && op.prim != &prim::fused;
    if (c.known) c.seconds = c.work / t.vector_ops_per_second;
    return c;
  }
  return {};
}

REFX_DECL std::int64_t passes::torus_hops(const Target& t, std::span<const std::int32_t> slice,
                                          std::span<const std::int32_t> from, std::span<const std::int32_t> to) {
  if (slice.size() != from.size() || slice.size() != to.size() || slice.size() > t.ici.dims.size())
    throw ArgumentError(
        fmt::format("refx: torus_hops takes one coordinate per slice axis, and {} has {} torus axes; "
                    "got a slice of {} axes, coordinates of {} and {}",
                    t.name, t.ici.dims.size(), slice.size(), from.size(), to.size()));
  std::int64_t hops = 0;
  for (std::size_t d = 0; d < slice.size(); ++d) {
    if (from[d] < 0 || from[d] >= slice[d] || to[d] < 0 || to[d] >= slice[d])
      throw ArgumentError(fmt::format("refx: torus_hops: coordinate {} or {} is outside axis {} of {} chips", from[d],
                                      to[d], d, slice[d]));
    const std::int64_t straight = std::abs(from[d] - to[d]);
    const bool ring = slice[d] % t.ici.wraparound_multiple == 0;
    hops += ring ? std::min(straight, slice[d] - straight) : straight;
  }
  return hops;
}

REFX_DECL double passes::ici_transfer_seconds(const Target& t, double bytes, std::int64_t hops) {
  return bytes / t.ici.link_rate() + static_cast<double>(hops) * t.ici.hop_latency_seconds;
}

}  // namespace refx
