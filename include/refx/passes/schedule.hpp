#pragma once
// A deterministic list scheduler, run on every block independently (the
// executor runs a block's ops in their vector order, so a schedule is a
// permutation of that vector). Every dependency of dependencies.hpp is kept.
// Among the ops whose dependencies are done it picks, in this order:
//   1. copy starts, and every op a later start depends on (so that starts run
//      as early as their inputs allow);
//   2. other ops, in program order;
//   3. waits (dma_wait, semaphore_wait) that no start needs: they run only
//      when nothing else can, i.e. just before their first consumer.
// Within a class, program order breaks ties. So independent compute written
// after a copy's wait moves between its start and its wait.

#include <bit>
#include <vector>

#include <refx/passes/dependencies.hpp>

namespace refx::detail {
/// A set of node positions with constant-time insert and take-the-smallest
/// (a three-level bitset: a bit per node, per non-empty word, per non-empty
/// word of words).
class MinSet {
 public:
  explicit MinSet(std::size_t n) : l0_((n + 63) / 64), l1_((l0_.size() + 63) / 64), l2_((l1_.size() + 63) / 64) {}
  bool empty() const noexcept { return count_ == 0; }
  void insert(std::size_t i) {
    const std::size_t w0 = i >> 6, w1 = w0 >> 6;
    l0_[w0] |= bit(i);
    l1_[w1] |= bit(w0);
    l2_[w1 >> 6] |= bit(w1);
    ++count_;
  }
  std::size_t take_min() {
    std::size_t w2 = 0;
    while (l2_[w2] == 0) ++w2;
    const std::size_t w1 = w2 * 64 + static_cast<std::size_t>(std::countr_zero(l2_[w2]));
    const std::size_t w0 = w1 * 64 + static_cast<std::size_t>(std::countr_zero(l1_[w1]));
    const std::size_t i = w0 * 64 + static_cast<std::size_t>(std::countr_zero(l0_[w0]));
    l0_[w0] &= l0_[w0] - 1;
    if (l0_[w0] == 0) {
      l1_[w1] &= ~bit(w0);
      if (l1_[w1] == 0) l2_[w2] &= ~bit(w1);
    }
    --count_;
    return i;
  }

 private:
  static std::uint64_t bit(std::size_t i) noexcept { return std::uint64_t{1} << (i & 63); }
  std::vector<std::uint64_t> l0_, l1_, l2_;
  std::size_t count_ = 0;
};
}  // namespace refx::detail

namespace refx::passes {

/// The scheduled order of one block: positions into its current op vector.
inline std::vector<std::int32_t> schedule_order(const BlockDeps& d) {
  const std::size_t n = d.size();
  // Class 0: starts and what they (transitively) need; 2: waits; 1: the rest.
  std::vector<std::uint8_t> cls(n, 1);
  for (std::size_t i = n; i-- > 0;) {
    bool urgent = (d.flags[i] & node_start) != 0;
    for (std::int32_t s : d.successors(i))
      if (cls[static_cast<std::size_t>(s)] == 0) urgent = true;
    cls[i] = urgent ? 0 : (d.flags[i] & node_wait) ? 2 : 1;
  }
  detail::MinSet ready[3] = {detail::MinSet(n), detail::MinSet(n), detail::MinSet(n)};
  refx::detail::Pool<std::int32_t> preds = d.preds;
  for (std::size_t i = 0; i < n; ++i)
    if (preds[i] == 0) ready[cls[i]].insert(i);
  std::vector<std::int32_t> order;
  order.reserve(n);
  while (order.size() < n) {
    detail::MinSet* q = !ready[0].empty() ? &ready[0] : !ready[1].empty() ? &ready[1] : &ready[2];
    if (q->empty()) throw Error("refx: schedule: the dependency graph has a cycle (internal error)");
    const auto i = static_cast<std::int32_t>(q->take_min());
    order.push_back(i);
    for (std::int32_t s : d.successors(static_cast<std::size_t>(i)))
      if (--preds[static_cast<std::size_t>(s)] == 0)
        ready[cls[static_cast<std::size_t>(s)]].insert(static_cast<std::size_t>(s));
  }
  return order;
}

/// Reorders the ops of every block of `g` (see the top of this file).
/// Returns how many ops changed position.
inline std::size_t schedule(Graph& g) {
  GraphFacts facts(g);
  detail::DepBuilder builder(g, facts);
  std::size_t moved = 0;
  std::vector<OpId> ops;
  for (std::size_t b = 0; b < g.num_blocks(); ++b) {
    const auto id = static_cast<BlockId>(b);
    if (g.block(id).ops.size() < 2) continue;
    const BlockDeps d = builder.build(id);
    const std::vector<std::int32_t> order = schedule_order(d);
    Block& blk = g.mutable_block(id);
    ops.resize(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      ops[k] = blk.ops[static_cast<std::size_t>(order[k])];
      if (order[k] != static_cast<std::int32_t>(k)) ++moved;
    }
    blk.ops.swap(ops);
  }
  return moved;
}

}  // namespace refx::passes
