#pragma once
// Helpers shared by the graph-pass tests (tests/passes).

#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <refx/passes/pipeline.hpp>
#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>

#include "support/testing.hpp"

namespace refx::graph_testing {

/// "verify_test.cpp:123": how a message names a line of a test file.
inline std::string line_of(const char* file, int line) {
  std::string f = file;
  if (auto cut = f.rfind('/'); cut != std::string::npos) f = f.substr(cut + 1);
  return f + ":" + std::to_string(line);
}

/// Pipeline options with fusion off.
inline passes::Options no_fusion() {
  passes::Options o;
  o.fuse = false;
  return o;
}

inline bool same_bits(const Buffer& a, const Buffer& b) {
  return a.bytes() == b.bytes() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

/// Runs `g` on copies of `args`; returns them.
inline std::vector<Buffer> run_on_copies(const Graph& g, const std::vector<Buffer>& args) {
  std::vector<Buffer> out;
  std::vector<Buffer*> ptrs;
  for (const Buffer& a : args) out.push_back(a.clone());
  for (Buffer& a : out) ptrs.push_back(&a);
  interpret(g, ptrs);
  return out;
}

/// Traces `f` twice, compiles it with `reference` and with `changed`, runs
/// both on copies of `args` and checks that every argument ends
/// bit-identical. Returns both graphs; `args` holds the results of `changed`.
struct Compiled {
  Graph reference, changed;
};
template <class F>
Compiled passes_match(F&& f, std::vector<Buffer>& args, const passes::Options& reference, const passes::Options& changed) {
  Compiled g{trace(f), trace(f)};
  passes::run_pipeline(g.reference, reference);
  passes::run_pipeline(g.changed, changed);
  const std::vector<Buffer> a = run_on_copies(g.reference, args);
  std::vector<Buffer> b = run_on_copies(g.changed, args);
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(same_bits(a[i], b[i])) << "argument " << i << "\n" << to_text(g.changed);
  args = std::move(b);
  return g;
}

/// Traces `f`, runs it unfused and fused on copies of `args`, and checks that
/// every argument ends bit-identical. Returns the fused graph; `args` holds
/// the fused results.
template <class F>
Graph fused_matches_unfused(F&& f, std::vector<Buffer>& args) {
  return passes_match(std::forward<F>(f), args, no_fusion(), passes::Options{}).changed;
}

/// The ops named `name` in the graph's blocks (the op pool also keeps ops
/// that fusion replaced).
inline std::size_t live_ops(const Graph& g, std::string_view name) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < g.num_blocks(); ++b)
    for (OpId o : g.block(static_cast<BlockId>(b)).ops)
      if (g.op(o).prim->name == name) ++n;
  return n;
}

/// Traces `f` for a mesh (device ids and axis names resolve) without compiling.
template <class F>
Graph trace_for(const Mesh& mesh, F&& f) {
  return trace(std::forward<F>(f), TraceOptions{{}, &mesh, -1});
}

/// The position of the first op named `name` (at any depth, in printed
/// order) in the text, or npos.
inline std::size_t find_line(const std::string& text, const std::string& needle) { return text.find(needle); }

}  // namespace refx::graph_testing
