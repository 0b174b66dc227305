#pragma once
// Reads in place: marks the loads whose Value may borrow the Ref's memory
// instead of copying the region (prim::load_reads_in_place; the load's
// implementation in ir/primitives/ref_ops.hpp then hands out a Buffer that
// borrows the Ref's storage when the region is one dense run of it).
//
// Runs last, on the final op order. A load in block b, at position l, whose
// Value's last use in b is at position u (an op of b that uses it, or a
// control op whose bodies do), is marked when nothing can change the region
// between the load and that use:
//   - no op in (l, u] writes or accumulates into a region of the Ref that
//     may overlap the load's (leaf effects, including a copy's start and its
//     receive wait; control ops: the union of their bodies);
//   - no op in (l, u] is or contains a semaphore_wait when some copy writes
//     into the Ref (a wait may be where a copy lands);
//   - no peer writes into the Ref (a remote copy's destination, or a
//     parameter that the cores of a device share);
//   - the Value is not a result of b (it would outlive the load's block),
//     no host effect (io_callback, debug_print) reads it, and the load does
//     not reinterpret the Ref's bytes (a bitcast view).
// Everything else keeps copying. Each load looks at the writers of its Ref
// between l and u through a sorted position list, at most
// `max_checked_writers` of them (a load with more in between copies), so the
// pass stays O(n log n) per block.

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include <refx/ir/primitives/ref_ops.hpp>
#include <refx/passes/footprint.hpp>

namespace refx::detail {

class ReadInPlace {
 public:
  static constexpr std::size_t max_checked_writers = 64;

  explicit ReadInPlace(Graph& g) : g_(g), facts_(g) {
    copy_dst_.assign(g.num_values(), 0);
    for (std::size_t o = 0; o < g.num_ops(); ++o) {
      const Op& op = g.op(static_cast<OpId>(o));
      if (op.prim == &prim::dma_start && facts_.block_of(static_cast<OpId>(o)) != no_id)
        copy_dst_[static_cast<std::size_t>(g.view(g.views(op)[1]).ref)] = 1;
    }
  }

  std::size_t run() {
    std::vector<std::pair<BlockId, std::size_t>> marked;  // (block, position)
    for (std::size_t b = 0; b < g_.num_blocks(); ++b) {
      const auto id = static_cast<BlockId>(b);
      if (b != 0 && facts_.block_of(g_.block(id).owner) == no_id) continue;
      for (std::size_t i : eligible(id)) marked.emplace_back(id, i);
    }
    for (const auto& [b, i] : marked) mark(b, i);
    return marked.size();
  }

 private:
  struct Write {
    ValueId ref;
    ViewId view;  // no_id: the whole Ref
  };

  // Positions of the loads of block b that may read in place.
  std::vector<std::size_t> eligible(BlockId b) {
    const Block& blk = g_.block(b);
    const std::size_t n = blk.ops.size();
    std::unordered_map<ValueId, std::vector<std::int32_t>> writers;  // per Ref: positions, ascending
    std::vector<std::int32_t> waits;                                 // positions that are or hold a semaphore_wait
    std::unordered_map<ValueId, std::int32_t> last_use;              // per loaded value
    std::vector<ValueId> io_read;                                    // loaded values a host effect may read
    for (std::size_t i = 0; i < n; ++i) {
      const Op& op = g_.op(blk.ops[i]);
      if (op.prim == &prim::load && op.block_count == 0 && op.out_count == 1) last_use.emplace(g_.outputs(op)[0], -1);
    }
    if (last_use.empty()) return {};
    for (std::size_t i = 0; i < n; ++i) {
      const OpId o = blk.ops[i];
      const Op& op = g_.op(o);
      const auto pos = static_cast<std::int32_t>(i);
      const bool io = (facts_.flags(o) & passes::node_io) != 0;
      const auto use = [&](ValueId v) {
        auto it = last_use.find(v);
        if (it == last_use.end()) return;
        it->second = pos;
        if (io) io_read.push_back(v);
      };
      for_each_write(o, [&](const Write& w) {
        auto& list = writers[w.ref];
        if (list.empty() || list.back() != pos) list.push_back(pos);
      });
      if (holds_semaphore_wait(o)) waits.push_back(pos);
      if (op.block_count == 0) {
        for_each_use(g_, op, use);
      } else {
        for (ValueId v : g_.inputs(op)) use(v);
        for (ValueId v : facts_.summary(o).uses) use(v);
      }
    }
    for (ValueId r : blk.results) last_use.erase(r);  // it outlives the block
    for (ValueId v : io_read) last_use.erase(v);
    std::vector<std::size_t> out;
    for (std::size_t l = 0; l < n; ++l) {
      const Op& load = g_.op(blk.ops[l]);
      if (load.prim != &prim::load || load.block_count != 0 || load.out_count != 1 || load.view_count != 1 ||
          load.attr_count != 0)
        continue;
      const auto it = last_use.find(g_.outputs(load)[0]);
      if (it == last_use.end() || it->second <= static_cast<std::int32_t>(l)) continue;
      const auto from = static_cast<std::int32_t>(l), to = it->second;
      const ViewId view = g_.views(load)[0];
      const ValueId ref = g_.view(view).ref;
      if (facts_.is_remote_dst(ref) || g_.view_dtype(view) != g_.type(ref).dtype) continue;
      if (copy_dst_[static_cast<std::size_t>(ref)] && any_between(waits, from, to)) continue;
      if (auto w = writers.find(ref);
          w != writers.end() && overlapping_write_between(w->second, b, ref, view, from, to))
        continue;
      out.push_back(l);
    }
    return out;
  }

  static bool any_between(const std::vector<std::int32_t>& sorted, std::int32_t from, std::int32_t to) {
    const auto it = std::upper_bound(sorted.begin(), sorted.end(), from);
    return it != sorted.end() && *it <= to;
  }

  // Does an op at a position in (from, to] write a region of `ref` that may
  // overlap `view`? Gives up (true) after max_checked_writers writers.
  bool overlapping_write_between(const std::vector<std::int32_t>& list, BlockId b, ValueId ref, ViewId view,
                                 std::int32_t from, std::int32_t to) {
    std::size_t checked = 0;
    for (auto it = std::upper_bound(list.begin(), list.end(), from); it != list.end() && *it <= to; ++it) {
      if (++checked > max_checked_writers) return true;
      bool hit = false;
      for_each_write(g_.block(b).ops[static_cast<std::size_t>(*it)], [&](const Write& w) {
        hit |= w.ref == ref && (w.view == no_id || may_overlap(g_, w.view, view));
      });
      if (hit) return true;
    }
    return false;
  }

  // Calls fn for every write or accumulation op `o` makes into a Ref visible
  // outside it: a leaf's effects (a copy's start and its receive wait write
  // the destination), a control op's bodies' union.
  template <class F>
  void for_each_write(OpId o, F&& fn) {
    const Op& op = g_.op(o);
    constexpr std::uint8_t writes = effect_write | effect_accum;
    if (op.block_count == 0) {
      facts_.for_each_data_effect(op, [&](std::uint8_t bits, ViewId v) {
        if (bits & writes) fn(Write{g_.view(v).ref, v});
      });
      return;
    }
    for (const passes::Access& a : facts_.summary(o).accesses)
      if (a.bits & writes) fn(Write{a.ref, a.view});
  }

  // Is `o` a semaphore_wait, or a control op with one in its bodies?
  bool holds_semaphore_wait(OpId o) {
    const Op& op = g_.op(o);
    if (op.block_count == 0) return op.prim == &prim::semaphore_wait;
    for (BlockId body : g_.bodies(op))
      for (OpId inner : g_.block(body).ops)
        if (holds_semaphore_wait(inner)) return true;
    return false;
  }

  // Replaces the load at position i of block b by one marked to read in place.
  void mark(BlockId b, std::size_t i) {
    const Op& load = g_.op(g_.block(b).ops[i]);
    const std::vector<ValueId> outputs(g_.outputs(load).begin(), g_.outputs(load).end());
    const std::vector<ViewId> views(g_.views(load).begin(), g_.views(load).end());
    const std::vector<Effect> effects(g_.effects(load).begin(), g_.effects(load).end());
    const std::int64_t attrs[] = {prim::load_in_place};
    const OpId marked = g_.add_op({&prim::load, {}, outputs, attrs, views, effects, {}, load.loc});
    g_.mutable_value(outputs[0]).producer = marked;
    g_.mutable_block(b).ops[i] = marked;
  }

  Graph& g_;
  passes::GraphFacts facts_;
  std::vector<char> copy_dst_;  // per value: some copy writes into this Ref
};

}  // namespace refx::detail

namespace refx::passes {

/// Marks the loads of `g` that may read their Ref in place (see above);
/// returns how many. Run it on the final op order (after schedule and fuse).
inline std::size_t read_in_place(Graph& g) {
  bool loads = false;
  for (std::size_t o = 0; o < g.num_ops() && !loads; ++o) loads = g.op(static_cast<OpId>(o)).prim == &prim::load;
  return loads ? detail::ReadInPlace(g).run() : 0;  // no loads: skip building the graph's facts
}

}  // namespace refx::passes
