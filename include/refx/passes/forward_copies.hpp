#pragma once
// Forwards copies: a local copy whose only purpose is to stage a block for
// the ops beside it moves nothing, and those ops use the copy's other end.
// This is what lets emit_pipeline's three passes over a block (copy in, body,
// copy out) be one: the body reads the input's block and writes the output's.
//
// Runs after schedule, before fuse, on each block's final copy order. A
// `dma_start` (local, plain, not predicated, no bitcast or reshape view) at
// position i, with its receive wait w later in the same block, is forwarded
//   - as a fetch, when nothing ever writes its source Ref (a kernel input no
//     op, copy or peer writes): no op in (i, w) touches the destination; the
//     loads after w that read exactly the destination region, where the
//     source's indices are defined, then read the source region, and nothing
//     else reads the destination before something overwrites all of it or
//     its scope ends (a scope's end continues in its parent: sync_copy);
//   - as a write-back, when the last op before i to touch its source region
//     is a store of exactly that region, in the same block or before the
//     scopes that hold the copy: no op between the store and w touches the
//     source region or the destination region; no
//     peer writes the destination Ref; the destination's traced indices are
//     defined before the store; and nothing reads the source region after w
//     before something overwrites all of it or its scope ends. The store then
//     writes the destination region.
// A forwarded copy's receive semaphore rises when it starts, by the bytes
// it would have moved (as a predicated copy that does not run), so every
// wait and the verifier's balance stay as written; the runtime counts it as
// a copy (LaunchStats::forwarded), and predict() and refx::explore run the
// program compiled without forwarding (Program::as_written). Under
// every schedule the copy could meet, the values read and the bytes left in
// the destination are the ones the copies would have given: nothing writes
// the regions while the copies were in flight, and nothing reads the staging
// region they no longer fill.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <refx/ir/primitives/comm.hpp>
#include <refx/ir/primitives/ref_ops.hpp>
#include <refx/ir/regions.hpp>
#include <refx/passes/footprint.hpp>
#include <refx/passes/options.hpp>

namespace refx::detail {

class ForwardCopies {
 public:
  ForwardCopies(Graph& g, std::size_t max_bytes) : g_(g), facts_(g), max_bytes_(max_bytes) {
    written_.assign(g.num_values(), 0);
    for (std::size_t o = 0; o < g.num_ops(); ++o) {
      const Op& op = g.op(static_cast<OpId>(o));
      if (op.block_count != 0 || facts_.block_of(static_cast<OpId>(o)) == no_id) continue;
      facts_.for_each_data_effect(op, [&](std::uint8_t bits, ViewId v) {
        if (bits & (effect_write | effect_accum)) written_[static_cast<std::size_t>(g.view(v).ref)] = 1;
      });
    }
  }

  // Decides on the graph as traced, then rewrites: each decision's
  // conditions are about the original ops, which the others' rewrites keep
  // true (a fetch's source is never written; a write-back's store and copy
  // are the only ops between them that touch either region).
  std::size_t run(Graph* before) {
    std::vector<std::pair<BlockId, std::size_t>> copies;
    for (std::size_t b = 0; b < g_.num_blocks(); ++b) {
      const auto id = static_cast<BlockId>(b);
      if (b != 0 && facts_.block_of(g_.block(id).owner) == no_id) continue;
      for (std::size_t i = 0; i < g_.block(id).ops.size(); ++i) {
        if (!plain_local_copy(g_.op(g_.block(id).ops[i]))) continue;
        const std::size_t w = receive_wait(id, i);
        if (w != npos && (fetch(id, i, w) || write_back(id, i, w))) copies.emplace_back(id, i);
      }
    }
    if (before != nullptr && !copies.empty()) *before = g_;
    for (const Retarget& r : retargets_) retarget(r);
    for (const auto& [b, i] : copies) mark_forwarded(b, i);
    return copies.size();
  }

 private:
  struct Retarget {
    BlockId block;
    std::size_t position;
    ViewId view;
    std::uint8_t bits;
  };

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  bool plain_view(ViewId v) const { return g_.view(v).layout == no_id; }

  bool plain_local_copy(const Op& op) const {
    if (op.prim != &prim::dma_start || op.view_count != 3) return false;
    const prim::DmaStartAttrs a = prim::dma_start_attrs(g_, op);
    const auto views = g_.views(op);
    const auto bytes =
        static_cast<std::size_t>(g_.view_elements(views[0])) * size_of(g_.type(g_.view(views[0]).ref).dtype);
    return !a.remote && !a.predicated && !a.forwarded && a.reduce == CopyReduce::none && plain_view(views[0]) &&
           plain_view(views[1]) && bytes <= max_bytes_;
  }

  // The position of the receive wait of the copy at position i of block b.
  std::size_t receive_wait(BlockId b, std::size_t i) const {
    const auto& ops = g_.block(b).ops;
    const auto start = g_.views(g_.op(ops[i]));
    for (std::size_t j = i + 1; j < ops.size(); ++j) {
      const Op& op = g_.op(ops[j]);
      if (op.prim != &prim::dma_wait || prim::dma_wait_attrs(g_, op).side != prim::WaitSide::recv) continue;
      const auto v = g_.views(op);
      if (same_region(g_, v[0], start[0]) && same_region(g_, v[1], start[1]) && same_region(g_, v[2], start[2]))
        return j;
    }
    return npos;
  }

  // Calls fn(bits, view) for every data access of op `o` (a control op: its
  // bodies' accesses visible outside it; view no_id: the whole Ref `ref`).
  template <class F>
  void for_each_access(OpId o, F&& fn) {
    const Op& op = g_.op(o);
    if (op.block_count == 0) {
      facts_.for_each_data_effect(op, [&](std::uint8_t bits, ViewId v) { fn(bits, v, g_.view(v).ref); });
      return;
    }
    for (const passes::Access& a : facts_.summary(o).accesses) fn(a.bits, a.view, a.ref);
  }

  // Does op `o` read or write region `v`?
  bool touches(OpId o, ViewId v) {
    bool hit = false;
    const ValueId ref = g_.view(v).ref;
    for_each_access(o, [&](std::uint8_t b, ViewId w, ValueId r) {
      hit |= (b & passes::data_bits) && r == ref && (w == no_id || may_overlap(g_, w, v));
    });
    return hit;
  }

  // Is op `o` a write (not an accumulation) that covers all of region `v`?
  // A copy's wait is not: what lands may be a peer's accumulation. Nor is a
  // remote or predicated copy's start (it writes a peer's Ref, or may not run).
  bool overwrites(OpId o, ViewId v) const {
    const Op& op = g_.op(o);
    if (op.block_count != 0 || op.prim == &prim::dma_wait) return false;
    if (op.prim == &prim::dma_start) {
      const prim::DmaStartAttrs a = prim::dma_start_attrs(g_, op);
      if (a.remote || a.predicated) return false;
    }
    for (const Effect& e : g_.effects(op))
      if ((e.bits & effect_write) && !(e.bits & effect_accum) && e.view != no_id && covers(g_, e.view, v)) return true;
    return false;
  }

  // After position `from` of block b, is the content of region v dead: read
  // by no op other than those `allowed(block, position)` accepts (and
  // collects) before an op overwrites all of it, or the end of the scope that
  // allocates it? A scope's end continues in its parent; a loop body's or a
  // branch's end is not the Ref's.
  template <class Allowed>
  bool dead_after(BlockId b, std::size_t from, ViewId v, Allowed&& allowed) {
    const ValueId ref = g_.view(v).ref;
    for (BlockId at = b;;) {
      const auto& ops = g_.block(at).ops;
      for (std::size_t k = from + 1; k < ops.size(); ++k) {
        if (allowed(at, k)) continue;
        if (overwrites(ops[k], v)) return true;
        if (touches(ops[k], v)) return false;
      }
      const Block& blk = g_.block(at);
      if (at == 0) return false;  // a kernel parameter: the caller reads it
      if (std::find(blk.params.begin(), blk.params.end(), ref) != blk.params.end()) return true;
      if (!leave_scope(at, from)) return false;
    }
  }

  // Moves (b, pos) to the position of b's owner in its parent block when b
  // is a scope's body (a scope runs its body once, in place).
  bool leave_scope(BlockId& b, std::size_t& pos) const {
    const OpId owner = g_.block(b).owner;
    if (b == 0 || g_.op(owner).prim != &prim::scope) return false;
    b = facts_.block_of(owner);
    const auto& ops = g_.block(b).ops;
    pos = static_cast<std::size_t>(std::find(ops.begin(), ops.end(), owner) - ops.begin());
    return true;
  }

  // Is every traced index of view v defined before position `pos` of block b?
  bool indices_defined_before(ViewId v, BlockId b, std::size_t pos) const {
    const View& view = g_.view(v);
    const auto& ops = g_.block(b).ops;
    for (const DimIndex& d : g_.dims(view)) {
      if (d.start.is_static()) continue;
      const ValueInfo& info = g_.value(static_cast<ValueId>(d.start.value));
      if (info.block != b) {
        if (!facts_.within(b, info.block)) return false;
        continue;
      }
      if (info.producer == no_id) continue;
      if (std::find(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(pos), info.producer) ==
          ops.begin() + static_cast<std::ptrdiff_t>(pos))
        return false;
    }
    return true;
  }

  bool is_load_of(OpId o, ViewId region) const {
    const Op& op = g_.op(o);
    return op.prim == &prim::load && op.view_count == 1 && same_region(g_, g_.views(op)[0], region);
  }

  // The copy at position i, received at w, as a fetch (see the file comment).
  bool fetch(BlockId b, std::size_t i, std::size_t w) {
    const auto& ops = g_.block(b).ops;
    const auto views = g_.views(g_.op(ops[i]));
    const ViewId src = views[0], dst = views[1];
    const ValueId src_ref = g_.view(src).ref;
    if (written_[static_cast<std::size_t>(src_ref)] || facts_.is_remote_dst(src_ref)) return false;
    for (std::size_t k = i + 1; k < w; ++k)
      if (touches(ops[k], dst)) return false;
    std::vector<Retarget> loads;
    const bool dead = dead_after(b, w, dst, [&](BlockId at, std::size_t k) {
      if (!is_load_of(g_.block(at).ops[k], dst) || !indices_defined_before(src, at, k)) return false;
      loads.push_back({at, k, src, effect_read});
      return true;
    });
    if (!dead) return false;
    retargets_.insert(retargets_.end(), loads.begin(), loads.end());
    return true;
  }

  // The copy at position i, received at w, as a write-back (see the file
  // comment). The store may precede the scope that holds the copy (sync_copy).
  bool write_back(BlockId b, std::size_t i, std::size_t w) {
    const auto& ops = g_.block(b).ops;
    const auto views = g_.views(g_.op(ops[i]));
    const ViewId src = views[0], dst = views[1];
    if (facts_.is_remote_dst(g_.view(dst).ref)) return false;
    BlockId at = b;
    std::size_t s = i;
    bool found = false;
    while (!found) {
      while (s-- > 0) {
        const OpId o = g_.block(at).ops[s];
        if (touches(o, src)) {
          found = true;
          break;
        }
        if (touches(o, dst)) return false;  // the destination, between the store and the copy
      }
      if (!found && !leave_scope(at, s)) return false;
    }
    const Op& store = g_.op(g_.block(at).ops[s]);
    if (store.prim != &prim::store || !same_region(g_, g_.views(store)[0], src)) return false;
    if (!indices_defined_before(dst, at, s)) return false;
    for (std::size_t k = i + 1; k < w; ++k)
      if (touches(ops[k], src) || touches(ops[k], dst)) return false;
    if (!dead_after(b, w, src, [](BlockId, std::size_t) { return false; })) return false;
    retargets_.push_back({at, s, dst, effect_write});
    return true;
  }

  // Replaces a load or store by one over another region.
  void retarget(const Retarget& r) {
    const Op& op = g_.op(g_.block(r.block).ops[r.position]);
    const std::vector<ValueId> inputs(g_.inputs(op).begin(), g_.inputs(op).end());
    const std::vector<ValueId> outputs(g_.outputs(op).begin(), g_.outputs(op).end());
    const std::vector<std::int64_t> attrs(g_.attrs(op).begin(), g_.attrs(op).end());
    const ViewId views[] = {r.view};
    const Effect effects[] = {Effect{r.bits, 0, r.view}};
    const OpId moved = g_.add_op({op.prim, inputs, outputs, attrs, views, effects, {}, op.loc});
    for (ValueId v : outputs) g_.mutable_value(v).producer = moved;
    g_.mutable_block(r.block).ops[r.position] = moved;
  }

  // Replaces the copy at position i of block b by its forwarded form.
  void mark_forwarded(BlockId b, std::size_t i) {
    const Op& op = g_.op(g_.block(b).ops[i]);
    const std::vector<ValueId> inputs(g_.inputs(op).begin(), g_.inputs(op).end());
    std::vector<std::int64_t> attrs(g_.attrs(op).begin(), g_.attrs(op).end());
    attrs.resize(6, 0);
    attrs[5] = 1;
    const std::vector<ViewId> views(g_.views(op).begin(), g_.views(op).end());
    const std::vector<Effect> effects(g_.effects(op).begin(), g_.effects(op).end());
    g_.mutable_block(b).ops[i] = g_.add_op({op.prim, inputs, {}, attrs, views, effects, {}, op.loc});
  }

  Graph& g_;
  passes::GraphFacts facts_;
  std::size_t max_bytes_;      // larger copies keep moving (Options::forward_copies_max_bytes)
  std::vector<char> written_;  // per value: some op, copy or wait writes into this Ref
  std::vector<Retarget> retargets_;
};

}  // namespace refx::detail

namespace refx::passes {

/// Forwards the copies of `g` of at most `max_bytes` that only stage a block
/// (see above); returns how many. Run it after schedule and before fuse.
/// With `before` given, and a copy forwarded, *before receives `g` as it was.
inline std::size_t forward_copies(Graph& g, Graph* before = nullptr,
                                  std::size_t max_bytes = Options{}.forward_copies_max_bytes) {
  bool copies = false;
  for (std::size_t o = 0; o < g.num_ops() && !copies; ++o) copies = g.op(static_cast<OpId>(o)).prim == &prim::dma_start;
  return copies ? detail::ForwardCopies(g, max_bytes).run(before) : 0;
}

}  // namespace refx::passes
