#pragma once
// The passes run when a kernel is compiled, in this order:
//   verify    hazards, descriptors, semaphore balance (throws VerifyError)
//   user      Options::user_passes, each given a Rewriter (ir/rewrite.hpp)
//   dce       removes ops with no visible effect whose results are unused
//   schedule  copy starts early, waits late, every dependency kept
//   forward_copies  copies that only stage a block move nothing; the ops
//             beside them read the source or write the destination
//   fuse      elementwise chains into one loop
//   read_in_place  loads that may borrow the Ref's memory (on the final order)
// Each is switched by Options. With the environment variable REFX_DOT_FILE
// set, the compiled graph and its dependency edges are written there as
// Graphviz DOT (overwritten per kernel; a "{}" in the path is replaced by a
// per-process kernel counter to keep every kernel's file).

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <refx/ir/dot.hpp>
#include <refx/ir/rewrite.hpp>
#include <refx/passes/dce.hpp>
#include <refx/passes/dependencies.hpp>
#include <refx/passes/forward_copies.hpp>
#include <refx/passes/fuse.hpp>
#include <refx/passes/options.hpp>
#include <refx/passes/read_in_place.hpp>
#include <refx/passes/schedule.hpp>
#include <refx/passes/verify.hpp>

namespace refx::detail {
inline void write_dot_file(const Graph& g) {
  const char* path = std::getenv("REFX_DOT_FILE");
  if (path == nullptr || *path == '\0') return;
  static std::atomic<int> counter{0};
  std::string file = path;
  if (const auto at = file.find("{}"); at != std::string::npos) file.replace(at, 2, std::to_string(counter++));
  const std::vector<DotEdge> edges = passes::dependency_edges(g);
  const std::string dot = to_dot(g, edges);
  if (std::FILE* f = std::fopen(file.c_str(), "w")) {
    std::fwrite(dot.data(), 1, dot.size(), f);
    std::fclose(f);
  } else {
    fmt::print(stderr, "refx: REFX_DOT_FILE: cannot write {}\n", file);
  }
}
}  // namespace refx::detail

namespace refx::passes {

/// Checks `g` and rewrites it for execution. Throws VerifyError on hazards.
/// With `as_written` given, when forward_copies forwarded a copy,
/// *as_written receives the same program compiled without forwarding (every
/// copy moves its bytes, as on a TPU); returns whether it did.
inline bool run_pipeline(Graph& g, const Options& options = {}, Graph* as_written = nullptr) {
  if (options.verify) {
    VerifyOptions v;
    v.shared_semaphore = options.shared_semaphore;
    for (const std::string& w : verify(g, v).warnings) {
      if (options.on_warning != nullptr) options.on_warning(w);
      else fmt::print(stderr, "{}\n", w);
    }
  }
  if (!options.user_passes.empty()) {
    Rewriter r(g);
    for (const auto& pass : options.user_passes) pass(r);
  }
  if (options.dce) dce(g);
  if (options.schedule) schedule(g);
  const auto finish = [&](Graph& h) {
    if (options.fuse) fuse(h);
    if (options.read_in_place) read_in_place(h);
  };
  const bool forwarded = options.forward_copies &&
                         forward_copies(g, as_written, options.forward_copies_max_bytes) > 0 && as_written != nullptr;
  if (forwarded) finish(*as_written);
  finish(g);
  detail::write_dot_file(g);
  return forwarded;
}

}  // namespace refx::passes
