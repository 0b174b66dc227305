#pragma once
// The passes run when a kernel is compiled: verify, then schedule and fuse.
// (Filled in by the graph issue; today: verification of nothing, identity.)

#include <refx/ir/graph.hpp>

namespace refx::passes {

struct Options {
  bool verify = true;
  bool schedule = true;
  bool fuse = true;
};

/// Checks `g` and rewrites it for execution. Throws VerifyError on hazards.
inline void run_pipeline(Graph& g, const Options& = {}) { (void)g; }

}  // namespace refx::passes
