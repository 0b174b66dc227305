#pragma once
// Verification of a traced graph before anything runs. Each error is a
// VerifyError naming the user's source lines (both ends of a hazard).
//
// Checked, and reported only when provable (no false alarms on valid code):
//  - a copy whose source and destination certainly overlap (for a remote
//    copy: with device-independent indices, so the copy landing here from the
//    peer overwrites what this device is sending);
//  - touching, between a copy's start and its wait, its source with a write or
//    accumulation, or its destination with any access;
//  - a descriptor made and never used; a wait on a semaphore no copy signals;
//  - a copy waited twice, or a wait on a semaphore only this device can
//    advance that can never be satisfied;
//  - copies and signals that do not balance their waits when a semaphore's
//    scope (or, for allocate()d ones, the kernel) ends, counted over
//    straight-line code and loops with static trip counts;
//  - one DMA semaphore element shared by two copies in flight at once (an
//    error, a warning or allowed: VerifyOptions::shared_semaphore).
// The checks simulate the program abstractly (simulation.hpp); see
// docs/graph.md for the SPMD reasoning behind remote copies.

#include <string>
#include <vector>

#include <refx/passes/detail/simulation.hpp>

namespace refx::detail {

/// Checks that need no simulation: copy aliasing and descriptor use.
inline void verify_copies_statically(const Graph& g, const passes::GraphFacts& facts) {
  const auto descs = g.descriptors();
  std::vector<std::uint8_t> used(descs.size(), 0);  // bit 0: started, bit 1: waited
  std::vector<char> sem_advanced(g.num_values(), 0);
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    if (facts.block_of(static_cast<OpId>(o)) == no_id) continue;
    if (op.prim == &prim::dma_start) {
      const prim::DmaStartAttrs attrs = prim::dma_start_attrs(g, op);
      const auto v = g.views(op);
      for (std::size_t k = 2; k < v.size(); ++k) sem_advanced[static_cast<std::size_t>(g.view(v[k]).ref)] = 1;
      const std::int64_t d = attrs.descriptor;
      if (d >= 0 && static_cast<std::size_t>(d) < used.size()) used[static_cast<std::size_t>(d)] |= 1;
      const bool remote = attrs.remote;
      if (must_overlap(g, v[0], v[1], !remote)) {
        const SourceLoc made =
            d >= 0 && static_cast<std::size_t>(d) < descs.size() ? descs[static_cast<std::size_t>(d)].loc : op.loc;
        if (remote)
          verify_error(
              "a remote copy from a Ref into itself (made at {}, started at {}): source and destination "
              "are the same region on every device, so the copy landing here from the peer overwrites what this "
              "device is sending; alternate the two slots of a double buffer",
              made, op.loc);
        verify_error(
            "a copy whose source and destination overlap (made at {}, started "
            "at {}); copy between disjoint regions",
            made, op.loc);
      }
    } else if (op.prim == &prim::dma_wait) {
      const std::int64_t d = prim::dma_wait_attrs(g, op).descriptor;
      if (d >= 0 && static_cast<std::size_t>(d) < used.size()) used[static_cast<std::size_t>(d)] |= 2;
    }
  }
  for (std::size_t d = 0; d < descs.size(); ++d)
    if (used[d] == 0)
      verify_error(
          "a copy descriptor made at {} is never started (nor waited); call "
          ".start() on it, or remove it",
          descs[d].loc);
  // A wait through a descriptor that is never started is fine (Pallas style:
  // a fresh descriptor waits for a copy another one started, or the peer's
  // copy), as long as some copy advances that semaphore.
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    if (op.prim != &prim::dma_wait || facts.block_of(static_cast<OpId>(o)) == no_id) continue;
    const ValueId sem = g.view(g.views(op)[2]).ref;
    const std::int64_t d = prim::dma_wait_attrs(g, op).descriptor;
    if (!sem_advanced[static_cast<std::size_t>(sem)]) {
      const SourceLoc made =
          d >= 0 && static_cast<std::size_t>(d) < descs.size() ? descs[static_cast<std::size_t>(d)].loc : op.loc;
      verify_error(
          "the wait at {} (descriptor made at {}) waits on {}, but no copy in "
          "the kernel ever advances it: it would wait forever",
          op.loc, made, semaphore_name(g, sem));
    }
  }
}

}  // namespace refx::detail

namespace refx::passes {

/// Checks `g` (see the top of this file); throws VerifyError on the first
/// problem. Returns the warnings (shared semaphores under `warn`).
inline VerifyReport verify(const Graph& g, const VerifyOptions& options = {}) {
  GraphFacts facts(g);
  detail::verify_copies_statically(g, facts);
  detail::Simulator sim(g, facts, options);
  sim.run();
  return sim.take_report();
}

}  // namespace refx::passes
