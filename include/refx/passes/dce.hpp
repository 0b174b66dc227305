#pragma once
// Dead-code elimination by side-effect level. An op is removed when nothing
// uses its outputs and it has no effect visible outside it: pure ops, reads
// (a load whose value is unused), and control ops whose bodies only read or
// write Refs private to them. Writes to kernel parameters and to Refs other
// ops can read, semaphore and copy operations, host I/O and optimization
// barriers are kept. Removal repeats until nothing changes, so a whole pure
// chain goes at once; a kernel with no effects at all becomes empty.

#include <vector>

#include <refx/passes/footprint.hpp>

namespace refx::detail {

inline bool removable(const Graph& g, passes::GraphFacts& facts, OpId o, const std::vector<std::int32_t>& uses) {
  const Op& op = g.op(o);
  for (ValueId v : g.outputs(op))
    if (uses[static_cast<std::size_t>(v)] != 0) return false;
  if (op.block_count == 0) {
    if (facts.is_barrier(op) || facts.is_allocate(op)) return false;
    for (const Effect& e : g.effects(op))
      if (e.bits & ~effect_read) return false;
    return true;
  }
  const passes::Summary& s = facts.summary(o);
  if (s.flags &
      (passes::node_comm | passes::node_io | passes::node_semaphore | passes::node_start | passes::node_writes))
    return false;
  for (const passes::Access& a : s.accesses)
    if (a.bits & ~effect_read) return false;
  // A barrier inside keeps the op (its own block keeps it alive anyway).
  bool barrier = false;
  for (BlockId body : g.bodies(op))
    for (OpId inner : g.block(body).ops) barrier |= facts.is_barrier(g.op(inner));
  return !barrier;
}

// Post-order over the block tree: bodies before the block holding their op.
inline std::size_t dce_block(Graph& g, passes::GraphFacts& facts, BlockId b, std::vector<std::int32_t>& uses) {
  std::size_t removed = 0;
  for (OpId o : g.block(b).ops)
    for (BlockId body : g.bodies(g.op(o))) removed += dce_block(g, facts, body, uses);
  std::vector<OpId> kept;
  const std::vector<OpId> ops = g.block(b).ops;
  std::vector<char> dead(ops.size(), 0);
  for (std::size_t i = ops.size(); i-- > 0;) {
    const OpId o = ops[i];
    if (!removable(g, facts, o, uses)) continue;
    dead[i] = 1;
    ++removed;
    const Op& op = g.op(o);
    for_each_use(g, op, [&](ValueId v) { --uses[static_cast<std::size_t>(v)]; });
    for (BlockId body : g.bodies(op)) count_uses(g, body, uses, -1);
  }
  if (removed == 0) return 0;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (!dead[i]) kept.push_back(ops[i]);
  g.mutable_block(b).ops = std::move(kept);
  return removed;
}

}  // namespace refx::detail

namespace refx::passes {

/// Removes dead ops from every block of `g`; returns how many were removed.
inline std::size_t dce(Graph& g) {
  std::size_t total = 0;
  for (;;) {
    GraphFacts facts(g);
    std::vector<std::int32_t> uses(g.num_values(), 0);
    count_uses(g, 0, uses, +1);
    const std::size_t removed = detail::dce_block(g, facts, 0, uses);
    total += removed;
    if (removed == 0) return total;
  }
}

}  // namespace refx::passes
