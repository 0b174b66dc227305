#pragma once
// A first cost estimate per op from a Target's figures (docs/targets.md,
// "Cost of one op"): what one op of a traced graph would take on one chip,
// alone, at the target's peak rates. No time flows between ops here; a
// kernel's modelled time is not the sum of these (copies overlap compute).
//
//   dot            2 m k n operations at the operand type's peak, the shape
//                  padded to the matrix unit: m to 8 rows, k and n to mxu_dim
//   vector ops     elementwise, fused chains and reductions: one operation
//                  per element of the larger of input and output, at
//                  vector_ops_per_second (unknown when the target has none)
//   local copy     Hbm <-> Vmem (or Hbm <-> Hbm): its bytes at HBM bandwidth
//   remote copy    its bytes over one ICI link, one hop; ici_transfer_seconds
//                  gives a route of `hops` chips (torus_hops counts them)
//   delay          the nanoseconds it asks for
// Anything else (loads, stores, semaphores, control ops) costs nothing here.

#include <cstdint>
#include <span>

#include <refx/config.hpp>
#include <refx/ir/graph.hpp>
#include <refx/target/target.hpp>

namespace refx {

/// One op's estimate.
struct OpCost {
  enum class Unit : std::uint8_t { none, matrix, vector, hbm, ici };
  Unit unit = Unit::none;
  double work = 0;     ///< operations (matrix, vector) or bytes (hbm, ici)
  double seconds = 0;  ///< work at the unit's peak, after padding
  bool known = true;   ///< false: the target has no figure for the unit (seconds is 0)
};

namespace passes {
/// The estimate of op `o` of `g` on target `t`.
REFX_DECL OpCost op_cost(const Graph& g, OpId o, const Target& t);
/// ICI hops from chip `from` to chip `to` of a slice of `slice` chips per
/// torus axis, routed one axis after another; an axis of a multiple of
/// t.ici.wraparound_multiple chips is a ring (the shorter way round).
REFX_DECL std::int64_t torus_hops(const Target& t, std::span<const std::int32_t> slice,
                                  std::span<const std::int32_t> from, std::span<const std::int32_t> to);
/// `bytes` over one link of a route of `hops` chips: bytes / link bandwidth
/// plus the per-hop latency of each hop (uncontended, one direction).
REFX_DECL double ici_transfer_seconds(const Target& t, double bytes, std::int64_t hops);
}  // namespace passes

}  // namespace refx

#if REFX_DEFINITIONS
#include <refx/passes/detail/cost.hpp>
#endif
