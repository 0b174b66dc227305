#pragma once
// What an op touches, as the passes see it: the values it uses, its data
// effects (as bit sets with a region), the semaphores it touches, its
// ordered-effect tokens, and flags that say how it may move. A control op
// (scope, fori_loop, when) is one node whose footprint is the union of its
// bodies' footprints, restricted to what is visible outside them: Refs
// allocated inside a body are private to it, semaphores never are (a peer
// may signal them).
//
// Protocol ops ("comm" below) keep their program order with each other:
// semaphore signals and waits, remote copies and their waits, and any access
// to a Ref that some remote copy writes into. Another device's progress is
// invisible to this device's dependencies, so the order the user wrote them
// in is the only contract the passes may rely on (see docs/graph.md).

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include <refx/core/mesh.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/comm.hpp>
#include <refx/ir/primitives/structural.hpp>
#include <refx/ir/regions.hpp>
#include <refx/ir/uses.hpp>

namespace refx::passes {

/// The effect bits that touch data in a Ref.
inline constexpr std::uint8_t data_bits = effect_read | effect_write | effect_accum;

/// The bits an access of kind `bits` conflicts with: a read conflicts with
/// writes and accumulations; a write or accumulation with every data access
/// (accum-accum too: two adds into one region need an order for bit-exact
/// results). A conflict test is one AND: `conflict_mask(a) & b`.
constexpr std::uint8_t conflict_mask(std::uint8_t bits) noexcept {
  if (bits & (effect_write | effect_accum)) return data_bits;
  if (bits & effect_read) return effect_write | effect_accum;
  return 0;
}

/// How an op may move (a bit set).
enum NodeFlags : std::uint16_t {
  node_comm = 1,        ///< protocol op: program order with every other protocol op
  node_start = 2,       ///< dma_start, or a control op containing one
  node_wait = 4,        ///< dma_wait or semaphore_wait (a leaf op)
  node_barrier = 8,     ///< an optimization_barrier: nothing moves across it
  node_io = 16,         ///< host I/O (ordered or not): never removed
  node_semaphore = 32,  ///< touches a semaphore
  node_writes = 64,     ///< writes or accumulates into a Ref visible outside
};

/// One data effect: bits and region (no_id = the whole Ref of `ref`).
struct Access {
  std::uint8_t bits = 0;
  ViewId view = no_id;
  ValueId ref = no_id;
};

/// The union of a control op's bodies, as visible outside them.
struct Summary {
  std::vector<ValueId> uses;
  std::vector<Access> accesses;
  std::vector<ValueId> semaphores;
  std::vector<std::uint8_t> tokens;
  std::uint16_t flags = 0;
};

/// Facts about a graph that every pass needs: which block holds each op, the
/// block tree, which Refs receive remote copies, and control-op summaries.
/// Valid while the set of ops per block does not change (reordering is fine).
class GraphFacts {
 public:
  explicit GraphFacts(const Graph& g) : g_(g) {
    op_block_.assign(g.num_ops(), no_id);
    tin_.assign(g.num_blocks(), 0);
    tout_.assign(g.num_blocks(), 0);
    summary_of_.assign(g.num_ops(), -1);
    remote_dst_.assign(g.num_values(), 0);
    number_blocks();
    for (std::size_t o = 0; o < g.num_ops(); ++o) {
      const Op& op = g.op(static_cast<OpId>(o));
      if (op.prim == &prim::dma_start && op_block_[o] != no_id && prim::dma_start_attrs(g, op).remote)
        remote_dst_[static_cast<std::size_t>(g.view(g.views(op)[1]).ref)] = 1;
      // A kernel traced per core (trace/cores.hpp): the other cores of the
      // device read and write its parameters (the shared Hbm) as a peer does.
      if (op.prim == &prim::axis_index && op_block_[o] != no_id &&
          prim::axis_attrs(g, op).axis == refx::detail::core_axis_name)
        for (ValueId p : g.params()) remote_dst_[static_cast<std::size_t>(p)] = 1;
    }
    barrier_ = find_primitive("optimization_barrier");
  }

  const Graph& graph() const noexcept { return g_; }
  /// The block that holds op `o`, or no_id if it is in none (removed).
  BlockId block_of(OpId o) const { return op_block_[static_cast<std::size_t>(o)]; }
  /// Is block `x` `b` or nested (at any depth) inside it?
  bool within(BlockId x, BlockId b) const {
    return tin_[static_cast<std::size_t>(b)] <= tin_[static_cast<std::size_t>(x)] &&
           tin_[static_cast<std::size_t>(x)] <= tout_[static_cast<std::size_t>(b)];
  }
  /// Is value `v` defined inside one of the bodies of control op `c`?
  bool defined_inside(ValueId v, const Op& c) const {
    const BlockId x = g_.value(v).block;
    for (BlockId body : g_.bodies(c))
      if (within(x, body)) return true;
    return false;
  }
  /// Does some remote copy write into Ref `ref` (on a peer: so a peer writes into ours)?
  bool is_remote_dst(ValueId ref) const { return remote_dst_[static_cast<std::size_t>(ref)] != 0; }
  bool is_barrier(const Op& op) const { return barrier_ != nullptr && op.prim == barrier_; }
  /// Does the op allocate kernel-lifetime storage (refx::allocate)?
  bool is_allocate(const Op& op) const { return op.prim == &prim::allocate; }
  /// Is an optimization_barrier primitive defined at all?
  bool has_barriers() const noexcept { return barrier_ != nullptr; }

  /// Is the copy with descriptor `desc` remote?
  bool remote_descriptor(std::int64_t desc) const {
    const auto d = g_.descriptors();
    return desc >= 0 && static_cast<std::size_t>(desc) < d.size() && d[static_cast<std::size_t>(desc)].remote;
  }

  /// Calls fn(bits, view) for each data effect of a leaf op, adding what the
  /// primitive's effects leave implicit: waiting for a local copy also ends
  /// its read of the source (the wait is where the source may be reused).
  template <class F>
  void for_each_data_effect(const Op& op, F&& fn) const {
    for (const Effect& e : g_.effects(op))
      if ((e.bits & data_bits) && e.view != no_id) fn(static_cast<std::uint8_t>(e.bits & data_bits), e.view);
    if (op.prim == &prim::dma_wait && prim::dma_wait_attrs(g_, op).side == prim::WaitSide::recv &&
        !remote_descriptor(prim::dma_wait_attrs(g_, op).descriptor))
      fn(effect_read, g_.views(op)[0]);
  }

  /// Flags of a leaf op (no bodies).
  std::uint16_t leaf_flags(const Op& op) const {
    std::uint16_t f = 0;
    if (op.prim == &prim::dma_start) {
      f |= node_start;
      if (prim::dma_start_attrs(g_, op).remote) f |= node_comm;
    } else if (op.prim == &prim::dma_wait) {
      f |= node_wait;
      if (remote_descriptor(prim::dma_wait_attrs(g_, op).descriptor)) f |= node_comm;
    } else if (op.prim == &prim::semaphore_wait) {
      f |= node_wait | node_comm;
    } else if (op.prim == &prim::semaphore_signal || op.prim == &prim::semaphore_read) {
      f |= node_comm;
    }
    if (is_barrier(op)) f |= node_barrier;
    for (const Effect& e : g_.effects(op)) {
      if (e.bits & (effect_io | effect_ordered)) f |= node_io;
      if (e.bits & (effect_write | effect_accum)) f |= node_writes;
      if ((e.bits & effect_semaphore) && e.view != no_id) {
        f |= node_semaphore;
        if (g_.type(g_.view(e.view).ref).semaphore != SemaphoreKind::dma) f |= node_comm;
      }
    }
    for_each_data_effect(op, [&](std::uint8_t, ViewId view) {
      if (is_remote_dst(g_.view(view).ref)) f |= node_comm;
    });
    return f;
  }

  /// The summary of control op `o` (computed once, bodies first).
  const Summary& summary(OpId o) {
    int& slot = summary_of_[static_cast<std::size_t>(o)];
    if (slot < 0) {
      Summary s = make_summary(g_.op(o));
      summaries_.push_back(std::move(s));
      slot = static_cast<int>(summaries_.size() - 1);
    }
    return summaries_[static_cast<std::size_t>(slot)];
  }

  /// Flags of any op (leaf or control).
  std::uint16_t flags(OpId o) {
    const Op& op = g_.op(o);
    return op.block_count == 0 ? leaf_flags(op) : summary(o).flags;
  }

 private:
  void number_blocks() {
    for (std::size_t b = 0; b < g_.num_blocks(); ++b)
      for (OpId o : g_.block(static_cast<BlockId>(b)).ops)
        op_block_[static_cast<std::size_t>(o)] = static_cast<BlockId>(b);
    // Iterative DFS over the block tree from the kernel body.
    std::int32_t clock = 0;
    struct Frame {
      BlockId block;
      std::size_t next_op;
      std::size_t next_body;
    };
    std::vector<Frame> stack{{0, 0, 0}};
    tin_[0] = clock++;
    while (!stack.empty()) {
      Frame& f = stack.back();
      const Block& blk = g_.block(f.block);
      if (f.next_op == blk.ops.size()) {
        tout_[static_cast<std::size_t>(f.block)] = clock - 1;
        stack.pop_back();
        continue;
      }
      const auto bodies = g_.bodies(g_.op(blk.ops[f.next_op]));
      if (f.next_body == bodies.size()) {
        ++f.next_op;
        f.next_body = 0;
        continue;
      }
      const BlockId child = bodies[f.next_body++];
      tin_[static_cast<std::size_t>(child)] = clock++;
      stack.push_back({child, 0, 0});
    }
  }

  Summary make_summary(const Op& c) {
    Summary s;
    const auto outer = [&](ValueId v) { return !defined_inside(v, c); };
    for (BlockId body : g_.bodies(c)) {
      for (ValueId r : g_.block(body).results)
        if (outer(r)) s.uses.push_back(r);
      for (OpId o : g_.block(body).ops) {
        const Op& op = g_.op(o);
        if (op.block_count == 0) {
          for_each_use(g_, op, [&](ValueId v) {
            if (outer(v)) s.uses.push_back(v);
          });
          s.flags |= leaf_flags(op) & static_cast<std::uint16_t>(~(node_wait | node_barrier));
          for_each_data_effect(op, [&](std::uint8_t bits, ViewId view) {
            if (outer(g_.view(view).ref)) s.accesses.push_back({bits, view, g_.view(view).ref});
          });
          for (const Effect& e : g_.effects(op)) {
            if ((e.bits & effect_semaphore) && e.view != no_id) s.semaphores.push_back(g_.view(e.view).ref);
            if (e.bits & effect_ordered) s.tokens.push_back(e.token);
          }
        } else {
          for (ValueId v : g_.inputs(op))
            if (outer(v)) s.uses.push_back(v);
          const Summary& inner = summary(o);
          for (ValueId v : inner.uses)
            if (outer(v)) s.uses.push_back(v);
          for (const Access& a : inner.accesses)
            if (outer(a.ref)) s.accesses.push_back(a);
          s.semaphores.insert(s.semaphores.end(), inner.semaphores.begin(), inner.semaphores.end());
          s.tokens.insert(s.tokens.end(), inner.tokens.begin(), inner.tokens.end());
          s.flags |= inner.flags;
        }
      }
    }
    // Writes into Refs private to the bodies are invisible outside.
    s.flags &= static_cast<std::uint16_t>(~node_writes);
    for (const Access& a : s.accesses)
      if (a.bits & (effect_write | effect_accum)) s.flags |= node_writes;
    dedupe(s.uses);
    dedupe(s.semaphores);
    dedupe(s.tokens);
    return s;
  }

  template <class T>
  static void dedupe(std::vector<T>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }

  const Graph& g_;
  std::vector<BlockId> op_block_;
  std::vector<std::int32_t> tin_, tout_;
  std::vector<int> summary_of_;
  std::vector<Summary> summaries_;
  std::vector<char> remote_dst_;
  const Primitive* barrier_ = nullptr;
};

/// The value of an integer scalar defined by a `constant` op, if it is one.
inline bool constant_int(const Graph& g, ValueId v, std::int64_t& out) {
  const OpId p = g.value(v).producer;
  if (p == no_id) return false;
  const Op& op = g.op(p);
  if (op.prim != &prim::constant) return false;
  const auto a = g.attrs(op);
  if (!is_integral(static_cast<DType>(a[0]))) return false;
  out = a[1];
  return true;
}

}  // namespace refx::passes
