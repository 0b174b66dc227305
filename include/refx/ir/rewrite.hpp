#pragma once
// Rewriting a traced graph from a user pass (docs/extend.md, "Rewriting a
// graph"). A pass is a function of a Rewriter, listed in
// passes::Options::user_passes; the pipeline (passes/pipeline.hpp) runs it
// after verification and before DCE, scheduling and fusion.
//
// A rewrite replaces a *pure* op (no effects, no Ref operands, no bodies) by
// an op of another pure primitive that defines the same values, with the same
// types, from operands visible at that point of the program. Every effect of
// the verified graph stays where it was, so the verification still holds;
// ops that lose their last use are removed by DCE.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <refx/core/error.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/uses.hpp>

namespace refx {

class Rewriter {
 public:
  explicit Rewriter(Graph& g) : g_(g), block_of_(g.num_ops(), no_id), uses_(g.num_values(), 0) {
    for (BlockId b = 0; b < static_cast<BlockId>(g.num_blocks()); ++b)
      for (const OpId o : g.block(b).ops) block_of_[static_cast<std::size_t>(o)] = b;
    count_uses(g, 0, uses_, +1);
  }

  const Graph& graph() const noexcept { return g_; }

  /// How many ops read value v now (as an operand, a view's Ref or a view's
  /// traced index), plus the blocks that return it (ir/uses.hpp).
  std::int32_t uses(ValueId v) const { return uses_.at(static_cast<std::size_t>(v)); }

  /// The op that defines v, or no_id for a block parameter.
  OpId producer(ValueId v) const { return g_.value(v).producer; }

  /// Replaces the pure op `at` by an op of the pure primitive `p` over
  /// `inputs` and `attrs`, defining the values `at` defined; returns the new
  /// op's id (it takes `at`'s place and source line). `p`'s abstract
  /// evaluation checks the operands (a TraceError naming `at`'s line); a
  /// refx::Error names the op if `at` is not pure, an operand is a Ref or is
  /// not defined before `at`, or `p` gives other types or effects.
  OpId replace(OpId at, const Primitive& p, std::span<const ValueId> inputs, std::span<const std::int64_t> attrs = {}) {
    const BlockId b = block_at(at);
    const Op& old = g_.op(at);
    if (old.effect_count != 0 || old.view_count != 0 || old.block_count != 0 || old.out_count == 0 ||
        old.prim->allocates)
      fail(at, "only a pure op (no effects, Ref operands or bodies; at least one result) can be replaced");
    if (p.abstract_eval == nullptr || p.impl == nullptr || p.control != ControlKind::none || p.allocates)
      fail(at, fmt::format("'{}' is not a pure primitive with an abstract evaluation and an implementation", p.name));
    // Copies: the spans may point into the graph's pools, which add_op grows.
    const std::vector<ValueId> ins(inputs.begin(), inputs.end()), outs(g_.outputs(old).begin(), g_.outputs(old).end());
    const std::vector<std::int64_t> at_attrs(attrs.begin(), attrs.end());
    for (std::size_t i = 0; i < ins.size(); ++i) {
      const ValueId v = ins[i];
      if (v < 0 || static_cast<std::size_t>(v) >= g_.num_values())
        fail(at, fmt::format("operand {} is no value of this graph", i));
      if (g_.type(v).is_ref()) fail(at, fmt::format("operand {} is a Ref; a pure op reads Values", i));
      if (!visible(v, at)) fail(at, fmt::format("operand {} (%{}) is not defined before the op", i, v));
    }
    AbstractContext c(g_, p, ins, {}, at_attrs, old.loc);
    p.abstract_eval(c);
    if (!c.effects().empty())
      fail(at, fmt::format("'{}' has effects here; a rewrite keeps the graph's effects as verified", p.name));
    bool same = c.outputs().size() == outs.size();
    for (std::size_t i = 0; same && i < outs.size(); ++i) same = c.outputs()[i] == g_.type(outs[i]);
    if (!same) {
      std::vector<std::string> want, got;
      for (const ValueId v : outs) want.push_back(type_text(g_.type(v)));
      for (const ValueType& t : c.outputs()) got.push_back(type_text(t));
      fail(at, fmt::format("'{}' gives ({}) where the op defines ({})", p.name, fmt::join(got, ", "),
                           fmt::join(want, ", ")));
    }
    for_each_use(g_, old, [&](ValueId v) { --uses_[static_cast<std::size_t>(v)]; });
    for (const ValueId v : ins) ++uses_[static_cast<std::size_t>(v)];  // the new op has no views
    const SourceLoc loc = old.loc;  // `old` refers into the op pool, which add_op may move
    const OpId fresh = g_.add_op({.prim = &p,
                                  .inputs = ins,
                                  .outputs = outs,
                                  .attrs = at_attrs,
                                  .views = {},
                                  .effects = {},
                                  .bodies = {},
                                  .loc = loc});
    for (const ValueId v : outs) g_.mutable_value(v).producer = fresh;
    for (OpId& o : g_.mutable_block(b).ops)
      if (o == at) o = fresh;
    block_of_.resize(g_.num_ops(), no_id);
    block_of_[static_cast<std::size_t>(fresh)] = b;
    block_of_[static_cast<std::size_t>(at)] = no_id;
    return fresh;
  }

 private:
  BlockId block_at(OpId o) const {
    if (o < 0 || static_cast<std::size_t>(o) >= block_of_.size() || block_of_[static_cast<std::size_t>(o)] == no_id)
      throw Error(fmt::format("refx: Rewriter::replace: op {} is not in the graph (replaced or removed)", o));
    return block_of_[static_cast<std::size_t>(o)];
  }

  /// v is a parameter of a block enclosing `at`, or defined by an op before
  /// `at` (or before the op whose body holds `at`) in its block.
  bool visible(ValueId v, OpId at) const {
    const ValueInfo& info = g_.value(v);
    for (OpId here = at; here != no_id;) {
      const BlockId b = block_at(here);
      if (info.block == b) {
        if (info.producer == no_id) return true;
        for (const OpId o : g_.block(b).ops) {
          if (o == here) return false;
          if (o == info.producer) return true;
        }
        return false;
      }
      here = g_.block(b).owner;
    }
    return false;
  }

  static std::string type_text(const ValueType& t) { return fmt::format("{}{}", t.dtype, t.shape); }

  [[noreturn]] void fail(OpId at, const std::string& what) const {
    const Op& op = g_.op(at);
    throw Error(fmt::format("refx: Rewriter::replace: op {} ('{}' at {}): {}", at, op.prim->name, op.loc, what));
  }

  Graph& g_;
  std::vector<BlockId> block_of_;   // per op: the block that lists it, no_id if none
  std::vector<std::int32_t> uses_;  // per value
};

}  // namespace refx
