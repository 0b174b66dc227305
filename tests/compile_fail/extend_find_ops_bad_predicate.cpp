// Misuse: a find_ops predicate with the wrong signature (it is called as
// pred(const Op&) or pred(OpId, const Op&) and returns bool).
// refx-expect: refx::extend::find_ops: the predicate is called as pred(const Op&) or pred(OpId, const Op&)
#include <refx/extend.hpp>
#include <refx/refx.hpp>

using namespace refx;

std::size_t num_loads(const Graph& g) {
  return extend::find_ops(g, [](const Op& op, int depth) { return depth == 0 && op.prim == &prim::load; }).size();
}
