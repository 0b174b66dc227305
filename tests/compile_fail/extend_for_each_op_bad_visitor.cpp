// Misuse: a for_each_op visitor with the wrong signature (it is called as
// fn(OpId, const Op&, int depth)).
// refx-expect: refx::extend::for_each_op: the visitor is called as fn(OpId, const Op&, int depth)
#include <refx/extend.hpp>
#include <refx/refx.hpp>

using namespace refx;

int count_loads(const Graph& g) {
  int n = 0;
  extend::for_each_op(g, [&](const Op& op) { n += op.prim == &prim::load ? 1 : 0; });
  return n;
}
