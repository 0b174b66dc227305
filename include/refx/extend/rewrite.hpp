#pragma once
// refx::extend -- user passes that rewrite a traced graph. A pass is a
// function of a Rewriter, given to the kernel builder:
//
//   kernel(f).passes({.user_passes = {my_pass}}).compile(mesh)
//
// and runs after verification, before DCE, scheduling and fusion. It may
// replace pure ops by ops of other pure primitives (ir/rewrite.hpp);
// walk the graph with for_each_op / find_ops (graph_walk.hpp) on
// rewriter.graph(). docs/extend.md, "Rewriting a graph", has an example.

#include <refx/ir/rewrite.hpp>

namespace refx::extend {

using refx::Rewriter;

}  // namespace refx::extend
