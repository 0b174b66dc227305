#pragma once
// Graphviz DOT export: one node per op (named by the user's names where
// given), data edges from producer to consumer, and nested bodies as
// clusters. Passes may add further edge kinds (see passes/dependencies.hpp).

#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <refx/config.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/primitive.hpp>

namespace refx {

/// An extra edge to draw: from op to op, with a kind that picks the colour.
struct DotEdge {
  OpId from, to;
  std::string_view kind;  ///< "data", "ref", "semaphore", "token", "order"
};

/// The graph in Graphviz DOT; `extra` adds dependency edges of other kinds.
REFX_DECL std::string to_dot(const Graph& g, std::span<const DotEdge> extra = {});

#if REFX_DEFINITIONS
namespace detail {
inline std::string_view dot_colour(std::string_view kind) {
  if (kind == "ref") return "#d62728";
  if (kind == "semaphore") return "#2ca02c";
  if (kind == "token") return "#9467bd";
  if (kind == "order") return "#7f7f7f";
  return "#1f77b4";
}
// Quotes and backslashes escaped; a newline becomes DOT's line break (a backslash and an n).
inline std::string dot_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}
inline void dot_block(const Graph& g, BlockId b, std::string& out, int depth) {
  const std::string pad(static_cast<std::size_t>(depth) * 2 + 2, ' ');
  for (OpId o : g.block(b).ops) {
    const Op& op = g.op(o);
    std::string label(op.prim->name);
    for (ViewId v : g.views(op))
      if (auto n = g.name(g.view(v).ref); !n.empty()) label += fmt::format(" {}", n);
    for (ValueId v : g.outputs(op))
      if (auto n = g.name(v); !n.empty()) label += fmt::format(" -> {}", n);
    if (op.loc.known()) label += fmt::format("\n{}", op.loc);
    out += fmt::format("{}op{} [label=\"{}\"];\n", pad, o, dot_escape(label));
    for (BlockId body : g.bodies(op)) {
      out += fmt::format("{}subgraph cluster_{} {{\n{}  label=\"{} body\";\n", pad, body, pad, op.prim->name);
      dot_block(g, body, out, depth + 1);
      out += pad + "}\n";
    }
  }
}
}  // namespace detail

REFX_DECL std::string to_dot(const Graph& g, std::span<const DotEdge> extra) {
  std::string out = "digraph refx {\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  detail::dot_block(g, 0, out, 0);
  for (std::size_t o = 0; o < g.num_ops(); ++o)
    for (ValueId v : g.inputs(g.op(static_cast<OpId>(o)))) {
      const OpId p = g.value(v).producer;
      if (p != no_id) out += fmt::format("  op{} -> op{} [color=\"{}\"];\n", p, o, detail::dot_colour("data"));
    }
  for (const DotEdge& e : extra)
    out +=
        fmt::format("  op{} -> op{} [color=\"{}\", label=\"{}\"];\n", e.from, e.to, detail::dot_colour(e.kind), e.kind);
  return out + "}\n";
}
#endif  // REFX_DEFINITIONS

}  // namespace refx
