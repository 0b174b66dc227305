#pragma once
// The ordered effect graph of one block: an edge u -> v (u before v in the
// block's current order) says v must stay after u. Edges come from
//   data       SSA: v uses a value u defines (inputs, view Refs, traced starts)
//   ref        Read/Write/Accum on one Ref where the regions may overlap
//              (no edge between two reads; accum-accum conflicts)
//   semaphore  two ops on one semaphore (any element of an array)
//   token      one chain per ordered host-effect kind
//   order      protocol ops (see footprint.hpp) and optimization barriers
// A control op is one node with the union of its bodies' footprints; its
// bodies get their own graphs.
//
// Cost: O(n) per block plus the Ref conflict scans. Each Ref keeps short
// lists of live readers and writers, each with the bounding range of flat
// offsets it touches (a cheap first test): a read scans only the writers; a
// write that covers an older access retires it (its successors are ordered
// after the write anyway); a list that grows past `max_live_accesses`
// collapses into its newest op (which is then ordered after all of them), so
// the scans stay bounded.

#include <array>
#include <limits>
#include <string_view>
#include <vector>

#include <refx/ir/dot.hpp>
#include <refx/passes/footprint.hpp>

namespace refx::passes {

enum class DepKind : std::uint8_t { data, ref, semaphore, token, order };

inline std::string_view dep_kind_name(DepKind k) noexcept {
  switch (k) {
    case DepKind::data: return "data";
    case DepKind::ref: return "ref";
    case DepKind::semaphore: return "semaphore";
    case DepKind::token: return "token";
    case DepKind::order: return "order";
  }
  return "data";
}

/// The dependency graph of one block, over positions 0..n-1 in its op order.
struct BlockDeps {
  BlockId block = 0;
  refx::detail::Pool<std::int32_t>
      succ_begin;  ///< CSR: successors of node i are succ[succ_begin[i] .. succ_begin[i+1])
  refx::detail::Pool<std::int32_t> succ;
  refx::detail::Pool<DepKind> kind;
  refx::detail::Pool<std::int32_t> preds;   ///< number of incoming edges per node
  refx::detail::Pool<std::uint16_t> flags;  ///< NodeFlags per node

  std::size_t size() const noexcept { return flags.size(); }
  std::span<const std::int32_t> successors(std::size_t i) const {
    return {succ.data() + succ_begin[i], static_cast<std::size_t>(succ_begin[i + 1] - succ_begin[i])};
  }
};

}  // namespace refx::passes

namespace refx::detail {

class DepBuilder {
 public:
  static constexpr std::size_t max_live_accesses = 128;

  DepBuilder(const Graph& g, passes::GraphFacts& facts) : g_(g), facts_(facts) {
    slot_of_ref_.assign(g.num_values(), -1);
    pos_.assign(g.num_ops(), -1);
  }

  passes::BlockDeps build(BlockId b) {
    const Block& blk = g_.block(b);
    const auto n = blk.ops.size();
    ops_ = &blk.ops;
    passes::BlockDeps d;
    d.block = b;
    d.flags.resize(n);
    edges_.clear();
    for (std::size_t i = 0; i < n; ++i) pos_[static_cast<std::size_t>(blk.ops[i])] = static_cast<std::int32_t>(i);
    last_comm_ = last_barrier_ = -1;
    since_barrier_.clear();
    last_token_.fill(-1);
    for (std::size_t i = 0; i < n; ++i) node(b, static_cast<std::int32_t>(i), blk.ops[i], d.flags[i]);
    for (ValueId r : touched_) slot_of_ref_[static_cast<std::size_t>(r)] = -1;
    touched_.clear();
    refs_.clear();
    // CSR by source node.
    d.succ_begin.assign(n + 1, 0);
    d.preds.assign(n, 0);
    for (const Edge& e : edges_) {
      ++d.succ_begin[static_cast<std::size_t>(e.from) + 1];
      ++d.preds[static_cast<std::size_t>(e.to)];
    }
    for (std::size_t i = 0; i < n; ++i) d.succ_begin[i + 1] += d.succ_begin[i];
    d.succ.resize(edges_.size());
    d.kind.resize(edges_.size());
    std::vector<std::int32_t> fill(d.succ_begin.begin(), d.succ_begin.end() - 1);
    for (const Edge& e : edges_) {
      const auto at = static_cast<std::size_t>(fill[static_cast<std::size_t>(e.from)]++);
      d.succ[at] = e.to;
      d.kind[at] = e.kind;
    }
    return d;
  }

 private:
  struct Edge {
    std::int32_t from, to;
    passes::DepKind kind;
  };
  struct Live {
    std::int32_t node;
    std::uint8_t bits;
    ViewId view;
    std::int64_t lo, hi;  ///< bounding range of flat element offsets (a cheap first test)
  };
  struct RefState {
    std::vector<Live> readers, writers;  ///< reads need only scan the writers
    std::int32_t last_semaphore_op = -1;
    Shape shape;
    std::array<std::int64_t, max_rank> strides{};
  };

  void edge(std::int32_t from, std::int32_t to, passes::DepKind k) {
    if (from >= 0 && from != to) edges_.push_back({from, to, k});
  }

  RefState& state(ValueId ref) {
    std::int32_t& s = slot_of_ref_[static_cast<std::size_t>(ref)];
    if (s < 0) {
      s = static_cast<std::int32_t>(refs_.size());
      refs_.emplace_back();
      touched_.push_back(ref);
    }
    return refs_[static_cast<std::size_t>(s)];
  }

  void use(BlockId b, std::int32_t i, ValueId v) {
    const ValueInfo& info = g_.value(v);
    if (info.block != b || info.producer == no_id) return;
    const std::int32_t p = pos_[static_cast<std::size_t>(info.producer)];
    if (p >= 0 && static_cast<std::size_t>(p) < ops_->size() && (*ops_)[static_cast<std::size_t>(p)] == info.producer)
      edge(p, i, passes::DepKind::data);
  }

  // The smallest range of flat offsets holding every element of the view.
  void bounds(ViewId view, const RefState& s, std::int64_t& lo, std::int64_t& hi) const {
    const auto dims = g_.dims(g_.view(view));
    lo = hi = 0;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const DimIndex& x = dims[d];
      if (x.size == 0) {
        lo = 1, hi = 0;  // empty
        return;
      }
      if (!x.start.is_static()) {  // anywhere along this dimension
        hi += (s.shape[d] - 1) * s.strides[d];
        continue;
      }
      lo += x.start.constant * s.strides[d];
      hi += (x.start.constant + (x.size - 1) * x.stride) * s.strides[d];
    }
  }

  // Adds edges from the conflicting entries of `list`; with `retire`, drops
  // the entries this access covers (in the same pass).
  void scan(std::vector<Live>& list, std::int32_t i, std::uint8_t mask, ViewId view, std::int64_t lo, std::int64_t hi,
            bool retire) {
    std::size_t kept = 0;
    for (std::size_t k = 0; k < list.size(); ++k) {
      const Live l = list[k];
      const bool near = l.hi >= lo && l.lo <= hi;
      if (near && l.node != i && (mask & l.bits) && may_overlap(g_, l.view, view))
        edge(l.node, i, passes::DepKind::ref);
      // A covered access is ordered before this write, and everything that
      // conflicts with it conflicts with this write: it can retire.
      if (retire && near && l.lo >= lo && l.hi <= hi && covers(g_, view, l.view)) continue;
      list[kept++] = l;
    }
    list.resize(kept);
  }

  void access(std::int32_t i, std::uint8_t bits, ViewId view, ValueId ref) {
    RefState& s = state(ref);
    if (s.shape.rank() == 0 && g_.type(ref).shape.rank() != 0) {
      s.shape = g_.type(ref).shape;
      s.strides = s.shape.strides();
    }
    std::int64_t lo, hi;
    bounds(view, s, lo, hi);
    const std::uint8_t mask = passes::conflict_mask(bits);
    const bool writes = (bits & (effect_write | effect_accum)) != 0;
    scan(s.writers, i, mask, view, lo, hi, writes);
    if (writes) scan(s.readers, i, mask, view, lo, hi, true);
    std::vector<Live>& list = writes ? s.writers : s.readers;
    list.push_back({i, bits, view, lo, hi});
    if (list.size() > max_live_accesses) {
      // Collapse into this op: ordered after all of them, it stands for the whole Ref.
      for (const Live& l : list) edge(l.node, i, passes::DepKind::ref);
      list.clear();
      list.push_back(
          {i, bits, no_id, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()});
    }
  }

  void semaphore(std::int32_t i, ValueId sem) {
    RefState& s = state(sem);
    edge(s.last_semaphore_op, i, passes::DepKind::semaphore);
    s.last_semaphore_op = i;
  }

  void token(std::int32_t i, std::uint8_t kind) {
    edge(last_token_[kind], i, passes::DepKind::token);
    last_token_[kind] = i;
  }

  void node(BlockId b, std::int32_t i, OpId o, std::uint16_t& flags) {
    const Op& op = g_.op(o);
    if (op.block_count == 0) {
      flags = facts_.leaf_flags(op);
      for_each_use(g_, op, [&](ValueId v) { use(b, i, v); });
      facts_.for_each_data_effect(op,
                                  [&](std::uint8_t bits, ViewId view) { access(i, bits, view, g_.view(view).ref); });
      for (const Effect& e : g_.effects(op)) {
        if ((e.bits & effect_semaphore) && e.view != no_id) semaphore(i, g_.view(e.view).ref);
        if (e.bits & effect_ordered) token(i, e.token);
      }
    } else {
      const passes::Summary& s = facts_.summary(o);
      flags = s.flags;
      for (ValueId v : g_.inputs(op)) use(b, i, v);
      for (ValueId v : s.uses) use(b, i, v);
      for (const passes::Access& a : s.accesses) access(i, a.bits, a.view, a.ref);
      for (ValueId sem : s.semaphores) semaphore(i, sem);
      for (std::uint8_t t : s.tokens) token(i, t);
    }
    if (flags & passes::node_comm) {
      edge(last_comm_, i, passes::DepKind::order);
      last_comm_ = i;
    }
    if (flags & passes::node_barrier) {
      for (std::int32_t j : since_barrier_) edge(j, i, passes::DepKind::order);
      edge(last_barrier_, i, passes::DepKind::order);
      since_barrier_.clear();
      last_barrier_ = i;
    } else {
      edge(last_barrier_, i, passes::DepKind::order);
      if (facts_.has_barriers()) since_barrier_.push_back(i);
    }
  }

  const Graph& g_;
  passes::GraphFacts& facts_;
  std::vector<std::int32_t> slot_of_ref_;
  std::vector<std::int32_t> pos_;
  std::vector<RefState> refs_;
  std::vector<ValueId> touched_;
  refx::detail::Pool<Edge> edges_;
  std::array<std::int32_t, 256> last_token_{};
  std::vector<std::int32_t> since_barrier_;
  const std::vector<OpId>* ops_ = nullptr;
  std::int32_t last_comm_ = -1, last_barrier_ = -1;
};

}  // namespace refx::detail

namespace refx::passes {

/// Builds the dependency graph of every block (index = BlockId).
inline std::vector<BlockDeps> block_dependencies(const Graph& g, GraphFacts& facts) {
  detail::DepBuilder builder(g, facts);
  std::vector<BlockDeps> out;
  out.reserve(g.num_blocks());
  for (std::size_t b = 0; b < g.num_blocks(); ++b) out.push_back(builder.build(static_cast<BlockId>(b)));
  return out;
}

/// The dependency graph of one block.
inline BlockDeps block_dependencies(const Graph& g, GraphFacts& facts, BlockId b) {
  detail::DepBuilder builder(g, facts);
  return builder.build(b);
}

/// Every dependency edge of `g` as DOT edges between op ids, for
/// `to_dot(g, dependency_edges(g))`. Data edges are left out unless asked
/// for (to_dot draws SSA edges itself); each (from, to, kind) appears once.
inline std::vector<DotEdge> dependency_edges(const Graph& g, bool include_data = false) {
  GraphFacts facts(g);
  std::vector<DotEdge> out;
  detail::DepBuilder builder(g, facts);
  for (std::size_t b = 0; b < g.num_blocks(); ++b) {
    const Block& blk = g.block(static_cast<BlockId>(b));
    if (b != 0 && facts.block_of(blk.owner) == no_id) continue;  // body of a removed op
    const BlockDeps d = builder.build(static_cast<BlockId>(b));
    std::vector<std::pair<std::int64_t, DepKind>> seen;
    for (std::size_t i = 0; i < d.size(); ++i) {
      seen.clear();
      for (std::size_t k = static_cast<std::size_t>(d.succ_begin[i]); k < static_cast<std::size_t>(d.succ_begin[i + 1]);
           ++k) {
        if (d.kind[k] == DepKind::data && !include_data) continue;
        const std::pair<std::int64_t, DepKind> key{d.succ[k], d.kind[k]};
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        out.push_back({blk.ops[i], blk.ops[static_cast<std::size_t>(d.succ[k])], dep_kind_name(d.kind[k])});
      }
    }
  }
  return out;
}

}  // namespace refx::passes
