#pragma once
// Helpers shared by the graph-pass tests (label graph).

#include <string>

#include <refx/passes/pipeline.hpp>
#include <refx/refx.hpp>

#include "support/testing.hpp"

namespace refx::graph_testing {

/// "verify_test.cpp:123": how a message names a line of a test file.
inline std::string line_of(const char* file, int line) {
  std::string f = file;
  if (auto cut = f.rfind('/'); cut != std::string::npos) f = f.substr(cut + 1);
  return f + ":" + std::to_string(line);
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
