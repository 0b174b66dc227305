#pragma once
// Renders a graph as text in the spirit of a jaxpr:
//   { lambda ; a:Ref{f32[8,128] vmem}. let
//       b:f32[8,128] <- a[...]
//       c:f32[8,128] = mul b b
//       a[0, 0:4] += d
//     }

#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include <refx/config.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/primitive.hpp>

namespace refx {

/// The graph as jaxpr-like text.
REFX_DECL std::string to_text(const Graph& g);

/// How messages name semaphore `v`: the user's name (`.name(...)`), the
/// barrier semaphore of a collective, or where it was allocated; of a scope
/// that allocates several handles, which of its parameters it is.
REFX_DECL std::string semaphore_name(const Graph& g, ValueId v);

}  // namespace refx

template <>
struct fmt::formatter<refx::Graph> : fmt::formatter<std::string_view> {
  format_context::iterator format(const refx::Graph& g, format_context& ctx) const;
};

#if REFX_DEFINITIONS
#include <algorithm>

#include <refx/ir/primitives/builtins.hpp>

namespace refx {
namespace detail {
class GraphPrinter {
 public:
  explicit GraphPrinter(const Graph& g) : g_(g), names_(g.num_values()) {
    // Generated names must not reuse a user's name (SSA: one binder per name).
    for (std::size_t v = 0; v < g.num_values(); ++v)
      if (auto user = g.name(static_cast<ValueId>(v)); !user.empty()) reserved_.emplace(user);
  }

  std::string print() {
    out_ = "{ lambda ;";
    for (ValueId p : g_.params()) {
      out_ += ' ';
      out_ += binder(p);
    }
    out_ += ". let\n";
    print_block(0, 2);
    out_ += "  }\n";
    return std::move(out_);
  }

 private:
  // a, b, ..., z, ba, bb, ... as in jaxprs; user names win. Generated names
  // skip the users' names, and a user name given to several values gets a
  // suffix after its first use (recv, recv_1, ...), so every binder is unique.
  const std::string& name(ValueId v) {
    std::string& n = names_[static_cast<std::size_t>(v)];
    if (n.empty()) {
      if (auto user = g_.name(v); !user.empty()) {
        n = std::string(user);
        for (std::size_t k = 1; used_.contains(n); ++k) n = fmt::format("{}_{}", user, k);
      } else {
        do {
          n.clear();
          std::size_t k = next_++;
          do {
            n.insert(n.begin(), static_cast<char>('a' + k % 26));
            k /= 26;
          } while (k > 0);
        } while (reserved_.contains(n) || used_.contains(n));
      }
      used_.insert(n);
    }
    return n;
  }
  std::string type_str(const ValueType& t) {
    if (t.is_semaphore())
      return fmt::format("Sem{{{}{}}}", t.semaphore, t.shape.rank() ? fmt::format("{}", t.shape) : "");
    if (t.is_ref()) return fmt::format("Ref{{{}{} {}}}", t.dtype, t.shape, t.space);
    return fmt::format("{}{}", t.dtype, t.shape);
  }
  std::string binder(ValueId v) { return fmt::format("{}:{}", name(v), type_str(g_.type(v))); }

  std::string view_str(ViewId id) {
    const View& v = g_.view(id);
    const Shape& base = g_.type(v.ref).shape;
    std::string s = name(v.ref) + "[";
    bool whole = true;
    std::vector<std::string> parts;
    const auto dims = g_.dims(v);
    for (std::size_t d = 0; d < v.rank; ++d) {
      const DimIndex& di = dims[d];
      const std::string start = di.start.is_static() ? fmt::format("{}", di.start.constant) : name(di.start.value);
      if (di.squeezed) {
        parts.push_back(start);
        whole = false;
      } else if (di.start.is_static() && di.start.constant == 0 && di.size == base[d] && di.stride == 1) {
        parts.push_back(":");
      } else {
        whole = false;
        std::string p = di.start.is_static()
                            ? fmt::format("{}:{}", di.start.constant, di.start.constant + di.size * di.stride)
                            : fmt::format("{}:{}+{}", start, start, di.size * di.stride);
        if (di.stride != 1) p += fmt::format(":{}", di.stride);
        parts.push_back(p);
      }
    }
    s += whole ? "..." : fmt::format("{}", fmt::join(parts, ", "));
    s += "]";
    if (const ViewLayout* l = g_.layout(v)) s += fmt::format(" as {}{}", l->dtype, l->shape);  // Ref::reshape / bitcast
    return s;
  }

  void print_block(BlockId b, int indent) {
    for (OpId o : g_.block(b).ops) print_op(g_.op(o), indent);
  }

  void print_op(const Op& op, int indent) {
    const auto ins = g_.inputs(op), outs = g_.outputs(op), views = g_.views(op);
    const std::string pad(static_cast<std::size_t>(indent) + 2, ' ');
    std::string line = pad;
    const std::string_view pname = op.prim->name;
    std::vector<std::string> outb;
    for (ValueId v : outs) outb.push_back(binder(v));
    if (op.prim == &prim::load) {
      line += fmt::format("{} <- {}", outb[0], view_str(views[0]));
    } else if (op.prim == &prim::store) {
      line += fmt::format("{} <- {}", view_str(views[0]), name(ins[0]));
    } else if (op.prim == &prim::accum) {
      line += fmt::format("{} += {}", view_str(views[0]), name(ins[0]));
    } else {
      if (!outb.empty()) line += fmt::format("{} = ", fmt::join(outb, " "));
      if (op.prim->print != nullptr) {
        op.prim->print(g_, op, line);
      } else {
        line += pname;
        const auto attrs = g_.attrs(op);
        if (!attrs.empty()) line += fmt::format("[{}]", fmt::join(attrs, ","));
      }
      for (ValueId v : ins) line += " " + name(v);
      for (ViewId v : views) line += " " + view_str(v);
    }
    out_ += line;
    const auto bodies = g_.bodies(op);
    if (!bodies.empty()) {
      for (BlockId body : bodies) {
        const Block& blk = g_.block(body);
        std::vector<std::string> params;
        for (ValueId p : blk.params) params.push_back(binder(p));
        out_ += fmt::format(" ({}) {{\n", fmt::join(params, " "));
        print_block(body, indent + 2);
        if (!blk.results.empty()) {
          std::vector<std::string> rs;
          for (ValueId r : blk.results) rs.push_back(name(r));
          out_ += fmt::format("{}  yield {}\n", pad, fmt::join(rs, " "));
        }
        out_ += pad + "}";
      }
    }
    if (op.loc.known()) out_ += fmt::format("  # {}", op.loc);
    out_ += "\n";
  }

  const Graph& g_;
  std::vector<std::string> names_;
  std::unordered_set<std::string> reserved_;  // every user-given name
  std::unordered_set<std::string> used_;      // every name printed so far
  std::size_t next_ = 0;
  std::string out_;
};
}  // namespace detail

REFX_DECL std::string to_text(const Graph& g) { return detail::GraphPrinter(g).print(); }

REFX_DECL std::string semaphore_name(const Graph& g, ValueId v) {
  const ValueType& t = g.type(v);
  if (auto n = g.name(v); !n.empty()) return fmt::format("{} semaphore '{}'", t.semaphore, n);
  const ValueInfo& info = g.value(v);
  if (info.producer != no_id) {
    const Op& op = g.op(info.producer);
    if (op.prim == &prim::barrier_semaphore)
      return fmt::format("barrier semaphore (collective id {})", prim::barrier_semaphore_attrs(g, op).collective_id);
    return fmt::format("the {} semaphore allocated at {}", t.semaphore, op.loc);
  }
  const Block& b = g.block(info.block);
  if (b.owner == no_id) return fmt::format("{} semaphore #{}", t.semaphore, v);
  std::string s = fmt::format("the {} semaphore allocated by the scope at {}", t.semaphore, g.op(b.owner).loc);
  if (b.params.size() > 1)
    if (const auto at = std::find(b.params.begin(), b.params.end(), v); at != b.params.end())
      s += fmt::format(" (its parameter {} of {})", at - b.params.begin() + 1, b.params.size());
  return s;
}
}  // namespace refx

REFX_DECL fmt::format_context::iterator fmt::formatter<refx::Graph>::format(const refx::Graph& g,
                                                                            format_context& ctx) const {
  return fmt::formatter<std::string_view>::format(refx::to_text(g), ctx);
}
#endif  // REFX_DEFINITIONS
