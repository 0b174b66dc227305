#pragma once
// Fusion: a chain of elementwise ops over one shape whose intermediate
// values have no other users becomes one `fused` op (ir/primitives/fused.hpp):
// one loop over the output, tile by tile, with no full-size intermediates.
// Dot and everything else stay separate; a reduction stays its own op, but
// reads a loaded Ref directly when the load has no other use, and a dot
// whose result is only stored into (or accumulated into) a Ref region writes
// that region itself (below). The chain also absorbs
//   - broadcasts of a scalar or of an array with extent-1 dimensions (the
//     loop reads the broadcast operand through zero strides: no broadcast
//     copy is made),
//   - loads of a Ref region (the loop reads the Ref), when nothing between
//     the load and the fused op depends on it (dependencies.hpp),
//   - the one store or accumulation of the chain's result into a Ref region,
//     unless that region overlaps a fused load in any other way than exactly.
// The fused op runs where the chain's result was produced (or stored). Each
// element sees the same ops in the same order as before: results are
// bit-identical.

#include <queue>
#include <vector>

#include <refx/ir/primitives/fused.hpp>
#include <refx/ir/primitives/ref_ops.hpp>
#include <refx/passes/dependencies.hpp>

namespace refx::passes {

struct FuseOptions {
  /// Chains over fewer elements than this stay unfused.
  std::int64_t min_elements = 1;
};

}  // namespace refx::passes

namespace refx::detail {

class Fuser {
 public:
  Fuser(Graph& g, const passes::FuseOptions& o) : g_(g), options_(o), facts_(g) {
    uses_.assign(g.num_values(), 0);
    count_uses(g, 0, uses_, +1);
    in_group_.assign(g.num_values(), 0);
    user_.assign(g.num_values(), -1);
  }

  std::size_t run() {
    std::size_t fused = 0;
    for (std::size_t b = 0; b < g_.num_blocks(); ++b) {
      const auto id = static_cast<BlockId>(b);
      if (b != 0 && facts_.block_of(g_.block(id).owner) == no_id) continue;
      fused += block(id);
    }
    return fused;
  }

 private:
  struct Group {
    std::vector<std::int32_t> members, loads, broadcasts;
    std::int32_t store = -1;
  };

  // A load or store through a bitcast Ref view moves bytes the fused loop's
  // gather / scatter (in the Ref's element type) would not: it stays alone.
  bool bitcast(const Op& op) const {
    const ViewId v = g_.views(op)[0];
    return g_.view_dtype(v) != g_.type(g_.view(v).ref).dtype;
  }

  bool member_candidate(const Op& op, const Shape& shape) const {
    if (op.prim->elementwise == nullptr || op.block_count != 0 || op.effect_count != 0 || op.out_count != 1 ||
        op.in_count == 0 || op.in_count > prim::fused_max_inputs || op.view_count != 0)
      return false;
    if (!(g_.type(g_.outputs(op)[0]).shape == shape)) return false;
    for (ValueId v : g_.inputs(op))
      if (g_.type(v).is_ref() || !(g_.type(v).shape == shape)) return false;
    return true;
  }

  std::size_t block(BlockId b) {
    ops_ = g_.block(b).ops;
    const std::size_t n = ops_.size();
    if (n == 0) return 0;
    part_.assign(n, 0);
    replace_.assign(n, no_id);
    have_deps_ = false;
    if (pos_.size() < g_.num_ops()) pos_.resize(g_.num_ops(), -1);
    for (std::size_t i = 0; i < n; ++i) pos_[static_cast<std::size_t>(ops_[i])] = static_cast<std::int32_t>(i);
    for (std::size_t i = 0; i < n; ++i)
      for (ValueId v : g_.inputs(g_.op(ops_[i]))) user_[static_cast<std::size_t>(v)] = static_cast<std::int32_t>(i);
    std::size_t made = 0;
    for (std::size_t i = n; i-- > 0;) {
      if (part_[i]) continue;
      const Op& root = g_.op(ops_[i]);
      if (root.out_count != 1) continue;
      const Shape shape = g_.type(g_.outputs(root)[0]).shape;
      if (shape.num_elements() < options_.min_elements || !member_candidate(root, shape)) continue;
      Group grp = grow(b, static_cast<std::int32_t>(i), shape);
      if (emit(b, grp, shape)) ++made;
    }
    for (std::size_t i = 0; i < n; ++i) made += fuse_reduce_load(b, static_cast<std::int32_t>(i)) ? 1 : 0;
    for (std::size_t i = 0; i < n; ++i) made += fuse_dot_store(static_cast<std::int32_t>(i)) ? 1 : 0;
    for (std::size_t i = 0; i < n; ++i)
      for (ValueId v : g_.inputs(g_.op(ops_[i]))) user_[static_cast<std::size_t>(v)] = -1;
    if (made == 0) return 0;
    std::vector<OpId> out;
    for (std::size_t i = 0; i < n; ++i) {
      if (replace_[i] != no_id) out.push_back(replace_[i]);
      else if (!part_[i]) out.push_back(ops_[i]);
    }
    g_.mutable_block(b).ops = std::move(out);
    return made;
  }

  static bool is_reduction(const Primitive* p) {
    return p == &prim::reduce_sum || p == &prim::reduce_max || p == &prim::reduce_min;
  }

  // A reduction whose operand is a load with no other use reads the Ref
  // itself (a view with a Read effect instead of the value input), when
  // nothing between the load and the reduction depends on the load: the
  // read then happens at the reduction, and no copy of the region is made.
  bool fuse_reduce_load(BlockId b, std::int32_t r) {
    if (part_[static_cast<std::size_t>(r)] || replace_[static_cast<std::size_t>(r)] != no_id) return false;
    const Op& red = g_.op(ops_[static_cast<std::size_t>(r)]);
    if (!is_reduction(red.prim) || red.in_count != 1 || red.view_count != 0 || red.effect_count != 0 ||
        red.block_count != 0 || red.out_count != 1)
      return false;
    const ValueId v = g_.inputs(red)[0];
    const std::int32_t l = position(b, v);
    if (l < 0 || l >= r || part_[static_cast<std::size_t>(l)] || uses_[static_cast<std::size_t>(v)] != 1) return false;
    const Op& load = g_.op(ops_[static_cast<std::size_t>(l)]);
    if (load.prim != &prim::load || load.effect_count != 1 || load.view_count != 1 || bitcast(load) ||
        g_.type(v).shape.num_elements() < options_.min_elements)
      return false;
    for (std::int32_t s : deps(b).successors(static_cast<std::size_t>(l)))
      if (s > l && s < r) return false;
    const ViewId view = g_.views(load)[0];
    const std::vector<ViewId> views{view};
    const std::vector<Effect> effects{Effect{effect_read, 0, view}};
    const ValueId out = g_.outputs(red)[0];
    const std::vector<std::int64_t> attrs(g_.attrs(red).begin(), g_.attrs(red).end());
    const OpId f = g_.add_op({red.prim, {}, std::span<const ValueId>(&out, 1), attrs, views, effects, {}, red.loc});
    g_.mutable_value(out).producer = f;
    part_[static_cast<std::size_t>(l)] = 1;
    replace_[static_cast<std::size_t>(r)] = f;
    return true;
  }

  // A dot whose result is used only by one store or accumulation into a Ref
  // region (`acc += dot(a, b)`, `o.store(dot(a, b))`) writes the region
  // itself, at the store's position (a view with the store's effect instead
  // of the value output): no result buffer, no separate pass over it.
  // f32 and f64 results only, in the Ref's own element type.
  bool fuse_dot_store(std::int32_t d) {
    if (part_[static_cast<std::size_t>(d)] || replace_[static_cast<std::size_t>(d)] != no_id) return false;
    const Op& dot = g_.op(ops_[static_cast<std::size_t>(d)]);
    if (dot.prim != &prim::dot || dot.in_count != 2 || dot.out_count != 1 || dot.view_count != 0 ||
        dot.effect_count != 0 || dot.block_count != 0)
      return false;
    const ValueId v = g_.outputs(dot)[0];
    const ValueType& t = g_.type(v);
    if ((t.dtype != DType::f32 && t.dtype != DType::f64) || t.shape.num_elements() < options_.min_elements ||
        uses_[static_cast<std::size_t>(v)] != 1)
      return false;
    const std::int32_t u = user_[static_cast<std::size_t>(v)];
    if (u <= d || part_[static_cast<std::size_t>(u)] || replace_[static_cast<std::size_t>(u)] != no_id) return false;
    const Op& s = g_.op(ops_[static_cast<std::size_t>(u)]);
    if ((s.prim != &prim::store && s.prim != &prim::accum) || s.in_count != 1 || g_.inputs(s)[0] != v ||
        s.view_count != 1 || s.effect_count != 1 || bitcast(s))
      return false;
    const std::vector<ValueId> inputs(g_.inputs(dot).begin(), g_.inputs(dot).end());
    const std::vector<std::int64_t> attrs(g_.attrs(dot).begin(), g_.attrs(dot).end());
    const std::vector<ViewId> views(g_.views(s).begin(), g_.views(s).end());
    const std::vector<Effect> effects(g_.effects(s).begin(), g_.effects(s).end());
    const OpId f = g_.add_op({dot.prim, inputs, {}, attrs, views, effects, {}, s.loc.known() ? s.loc : dot.loc});
    part_[static_cast<std::size_t>(d)] = 1;
    replace_[static_cast<std::size_t>(u)] = f;
    return true;
  }

  std::int32_t position(BlockId b, ValueId v) const {
    const ValueInfo& info = g_.value(v);
    if (info.block != b || info.producer == no_id) return -1;
    return pos_of(info.producer);
  }
  std::int32_t pos_of(OpId o) const {
    const auto p = pos_[static_cast<std::size_t>(o)];
    return p >= 0 && static_cast<std::size_t>(p) < ops_.size() && ops_[static_cast<std::size_t>(p)] == o ? p : -1;
  }

  // Walks producers backwards from the root: an op joins when every use of
  // its result is inside the group (decided: all later members are known).
  Group grow(BlockId b, std::int32_t root, const Shape& shape) {
    Group grp;
    std::priority_queue<std::int32_t> todo;
    std::vector<std::int32_t> seen;
    const auto add_member = [&](std::int32_t i) {
      grp.members.push_back(i);
      part_[static_cast<std::size_t>(i)] = 2;  // tentative
      seen.push_back(i);
      for (ValueId v : g_.inputs(g_.op(ops_[static_cast<std::size_t>(i)]))) {
        if (in_group_[static_cast<std::size_t>(v)]++ == 0) touched_.push_back(v);
        if (const std::int32_t p = position(b, v); p >= 0) todo.push(p);
      }
    };
    add_member(root);
    std::size_t operands = 0;
    while (!todo.empty()) {
      const std::int32_t j = todo.top();
      todo.pop();
      if (part_[static_cast<std::size_t>(j)]) continue;
      const Op& p = g_.op(ops_[static_cast<std::size_t>(j)]);
      if (p.out_count != 1) continue;
      const ValueId v = g_.outputs(p)[0];
      if (in_group_[static_cast<std::size_t>(v)] != uses_[static_cast<std::size_t>(v)]) continue;
      if (member_candidate(p, shape) && grp.members.size() < prim::fused_max_members) {
        add_member(j);
      } else if (p.prim == &prim::broadcast && g_.type(v).shape == shape && ++operands < prim::fused_max_operands / 2) {
        grp.broadcasts.push_back(j);
        part_[static_cast<std::size_t>(j)] = 2;
        seen.push_back(j);
      } else if (p.prim == &prim::load && p.effect_count == 1 && g_.type(v).shape == shape && !bitcast(p) &&
                 ++operands < prim::fused_max_operands / 2) {
        grp.loads.push_back(j);
        part_[static_cast<std::size_t>(j)] = 2;
        seen.push_back(j);
      }
    }
    for (ValueId v : touched_) in_group_[static_cast<std::size_t>(v)] = 0;
    touched_.clear();
    for (std::int32_t s : seen) part_[static_cast<std::size_t>(s)] = 0;
    // The one store / accumulation of the result.
    const ValueId result = g_.outputs(g_.op(ops_[static_cast<std::size_t>(root)]))[0];
    const std::int32_t u = user_[static_cast<std::size_t>(result)];
    if (uses_[static_cast<std::size_t>(result)] == 1 && u > root) {
      const Op& s = g_.op(ops_[static_cast<std::size_t>(u)]);
      if ((s.prim == &prim::store || s.prim == &prim::accum) && g_.inputs(s)[0] == result && !bitcast(s) &&
          !part_[static_cast<std::size_t>(u)]) {
        bool ok = true;
        for (std::int32_t l : grp.loads) {
          const ViewId lv = g_.views(g_.op(ops_[static_cast<std::size_t>(l)]))[0], sv = g_.views(s)[0];
          if (may_overlap(g_, lv, sv) && !same_region(g_, lv, sv)) ok = false;
        }
        if (ok) grp.store = u;
      }
    }
    // A fused load reads at the fused op's position: nothing in between may depend on it.
    if (!grp.loads.empty()) {
      const std::int32_t at = grp.store >= 0 ? grp.store : root;
      std::vector<char> mine(ops_.size(), 0);
      for (auto* part : {&grp.members, &grp.broadcasts, &grp.loads})
        for (std::int32_t i : *part) mine[static_cast<std::size_t>(i)] = 1;
      const passes::BlockDeps& d = deps(b);
      std::erase_if(grp.loads, [&](std::int32_t l) {
        for (std::int32_t s : d.successors(static_cast<std::size_t>(l)))
          if (s > l && s < at && !mine[static_cast<std::size_t>(s)]) return true;
        return false;
      });
    }
    return grp;
  }

  const passes::BlockDeps& deps(BlockId b) {
    if (!have_deps_) {
      deps_ = block_dependencies(g_, facts_, b);
      have_deps_ = true;
    }
    return deps_;
  }

  bool emit(BlockId b, Group& grp, const Shape&) {
    if (grp.members.size() < 2 && grp.loads.empty() && grp.broadcasts.empty() && grp.store < 0) return false;
    std::sort(grp.members.begin(), grp.members.end());
    const auto op_at = [&](std::int32_t i) -> const Op& { return g_.op(ops_[static_cast<std::size_t>(i)]); };
    const auto output_at = [&](std::int32_t i) { return g_.outputs(op_at(i))[0]; };
    std::vector<ValueId> inputs;
    std::vector<ViewId> views;
    std::vector<Effect> effects;
    const auto input_index = [&](ValueId v) {
      auto it = std::find(inputs.begin(), inputs.end(), v);
      if (it != inputs.end()) return static_cast<std::int64_t>(it - inputs.begin());
      inputs.push_back(v);
      return static_cast<std::int64_t>(inputs.size() - 1);
    };
    for (std::int32_t l : grp.loads) {
      views.push_back(g_.views(op_at(l))[0]);
      effects.push_back(Effect{effect_read, 0, views.back()});
    }
    const ValueId result = output_at(grp.members.back());
    const auto mode = grp.store < 0                           ? prim::FusedOut::value
                      : op_at(grp.store).prim == &prim::store ? prim::FusedOut::store
                                                              : prim::FusedOut::accum;
    std::vector<prim::FusedMemberSpec> members;
    for (std::int32_t i : grp.members) {
      prim::FusedMemberSpec spec{ops_[static_cast<std::size_t>(i)], {}};
      for (ValueId v : g_.inputs(op_at(i))) {
        const std::int32_t p = position(b, v);
        const auto find = [&](const std::vector<std::int32_t>& part) {
          auto it = std::find(part.begin(), part.end(), p);
          return p >= 0 && it != part.end() ? static_cast<std::int64_t>(it - part.begin()) : std::int64_t{-1};
        };
        std::int64_t k;
        if ((k = find(grp.members)) >= 0) spec.sources.push_back(prim::fused_source(prim::FusedSource::member, k));
        else if ((k = find(grp.loads)) >= 0) spec.sources.push_back(prim::fused_source(prim::FusedSource::load, k));
        else if ((k = find(grp.broadcasts)) >= 0)
          spec.sources.push_back(
              prim::fused_source(prim::FusedSource::broadcast,
                                 input_index(g_.inputs(op_at(grp.broadcasts[static_cast<std::size_t>(k)]))[0])));
        else spec.sources.push_back(prim::fused_source(prim::FusedSource::input, input_index(v)));
      }
      members.push_back(std::move(spec));
    }
    if (inputs.size() + views.size() + 1 > prim::fused_max_operands) return false;
    const std::vector<std::int64_t> attrs = prim::fused_attrs(g_, members, mode, inputs, views);
    std::vector<ValueId> outputs;
    SourceLoc loc = op_at(grp.members.back()).loc;
    if (grp.store >= 0) {
      const Op& s = op_at(grp.store);
      views.push_back(g_.views(s)[0]);
      effects.push_back(Effect{static_cast<std::uint8_t>(mode == prim::FusedOut::store ? effect_write : effect_accum),
                               0, views.back()});
      if (s.loc.known()) loc = s.loc;
    } else {
      outputs.push_back(result);
    }
    const OpId f = g_.add_op({&prim::fused, inputs, outputs, attrs, views, effects, {}, loc});
    if (!outputs.empty()) g_.mutable_value(result).producer = f;
    const std::int32_t at = grp.store >= 0 ? grp.store : grp.members.back();
    for (auto* part : {&grp.members, &grp.broadcasts, &grp.loads})
      for (std::int32_t i : *part) part_[static_cast<std::size_t>(i)] = 1;
    if (grp.store >= 0) part_[static_cast<std::size_t>(grp.store)] = 1;
    replace_[static_cast<std::size_t>(at)] = f;
    return true;
  }

  Graph& g_;
  passes::FuseOptions options_;
  passes::GraphFacts facts_;
  std::vector<std::int32_t> uses_, in_group_, user_, pos_;
  std::vector<ValueId> touched_;
  std::vector<OpId> ops_;
  std::vector<char> part_;
  std::vector<OpId> replace_;
  passes::BlockDeps deps_;
  bool have_deps_ = false;
};

}  // namespace refx::detail

namespace refx::passes {

/// Fuses elementwise chains in every block of `g`; returns how many fused ops were made.
inline std::size_t fuse(Graph& g, const FuseOptions& options = {}) { return detail::Fuser(g, options).run(); }

}  // namespace refx::passes
