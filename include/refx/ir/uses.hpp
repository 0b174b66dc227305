#pragma once
// Which values an op reads, and how often each value of a graph is read:
// what DCE, dependencies, fusion and user rewrites (ir/rewrite.hpp) count.

#include <cstdint>
#include <vector>

#include <refx/ir/graph.hpp>

namespace refx {

/// Calls fn(v) for every value a leaf op reads: its inputs, the Refs of its
/// views and the traced starts of their dimensions.
template <class F>
void for_each_use(const Graph& g, const Op& op, F&& fn) {
  for (ValueId v : g.inputs(op)) fn(v);
  for (ViewId vid : g.views(op)) {
    const View& v = g.view(vid);
    fn(v.ref);
    for (const DimIndex& d : g.dims(v))
      if (!d.start.is_static()) fn(static_cast<ValueId>(d.start.value));
  }
}

/// Adds `delta` to uses[v] for every use of v in block `b` and the blocks
/// nested in it (op operands, view Refs and starts, block results).
inline void count_uses(const Graph& g, BlockId b, std::vector<std::int32_t>& uses, int delta) {
  for (ValueId r : g.block(b).results) uses[static_cast<std::size_t>(r)] += delta;
  for (OpId o : g.block(b).ops) {
    const Op& op = g.op(o);
    for_each_use(g, op, [&](ValueId v) { uses[static_cast<std::size_t>(v)] += delta; });
    for (BlockId body : g.bodies(op)) count_uses(g, body, uses, delta);
  }
}

}  // namespace refx
