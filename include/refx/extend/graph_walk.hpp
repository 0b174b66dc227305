#pragma once
// refx::extend -- walking a traced Graph from user code. A user pass is a
// function over `const Graph&`; these helpers visit its ops, including the
// ops nested in fori_loop, when and scope bodies, in program order:
//
//   for_each_op(g, fn)        fn(OpId, const Op&, int depth) for every op
//   count_ops(g, "mul_add")   how many ops of a primitive (by name or identity)
//   find_ops(g, pred)         the ids of the ops matching a predicate
//
// Ops are visited pre-order: an op with bodies (a loop, a `when`, a scope)
// comes first, then the ops of each body at depth + 1, then the op after it.
// The kernel body is depth 0. Nothing here allocates except find_ops' result.

#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <vector>

#include <refx/ir/graph.hpp>
#include <refx/ir/primitive.hpp>

namespace refx::extend {

/// Visits the ops of block `b` (and of their bodies) in program order;
/// `depth` is the nesting depth of `b`. Most passes want for_each_op(g, fn).
template <class F>
void for_each_op_in(const Graph& g, BlockId b, F&& fn, int depth = 0) {
  static_assert(std::is_invocable_v<F&, OpId, const Op&, int>,
                "refx::extend::for_each_op: the visitor is called as fn(OpId, const Op&, int depth)");
  // By index and looked up again after fn: fn may replace the op it is
  // given (Rewriter::replace), which grows the graph's pools.
  for (std::size_t i = 0; i < g.block(b).ops.size(); ++i) {
    const OpId id = g.block(b).ops[i];
    fn(id, g.op(id), depth);
    const OpId now = g.block(b).ops[i];
    for (std::size_t k = 0; k < g.op(now).block_count; ++k) for_each_op_in(g, g.bodies(g.op(now))[k], fn, depth + 1);
  }
}

/// Calls fn(op_id, op, depth) for every op of `g`, nested bodies included, in
/// program order (see the top of this file). `g.op(id)` is `op`.
template <class F>
void for_each_op(const Graph& g, F&& fn) {
  for_each_op_in(g, 0, fn, 0);
}

/// The number of ops of the primitive named `prim_name`, at any depth.
inline std::size_t count_ops(const Graph& g, std::string_view prim_name) {
  std::size_t n = 0;
  for_each_op(g, [&](OpId, const Op& op, int) { n += op.prim->name == prim_name ? 1 : 0; });
  return n;
}

/// The number of ops of primitive `p` (compared by identity), at any depth.
inline std::size_t count_ops(const Graph& g, const Primitive& p) {
  std::size_t n = 0;
  for_each_op(g, [&](OpId, const Op& op, int) { n += op.prim == &p ? 1 : 0; });
  return n;
}

/// The ids of the ops for which `pred(op)` (or `pred(id, op)`) is true, in
/// program order, at any depth.
template <class P>
std::vector<OpId> find_ops(const Graph& g, P&& pred) {
  static_assert(std::is_invocable_r_v<bool, P&, const Op&> || std::is_invocable_r_v<bool, P&, OpId, const Op&>,
                "refx::extend::find_ops: the predicate is called as pred(const Op&) or pred(OpId, const Op&)");
  std::vector<OpId> found;
  for_each_op(g, [&](OpId id, const Op& op, int) {
    bool hit;
    if constexpr (std::is_invocable_r_v<bool, P&, OpId, const Op&>) hit = pred(id, op);
    else hit = pred(op);
    if (hit) found.push_back(id);
  });
  return found;
}

/// The ids of the ops of primitive `p`, in program order, at any depth.
inline std::vector<OpId> find_ops(const Graph& g, const Primitive& p) {
  return find_ops(g, [&](const Op& op) { return op.prim == &p; });
}

}  // namespace refx::extend
