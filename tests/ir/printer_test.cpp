// The text printer (jaxpr-like) and the Graphviz DOT export. Checks are on
// substrings and structure, not on whole texts.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <refx/refx.hpp>

#include "support/testing.hpp"

using namespace refx;
using refx::testing::count_of;

namespace {

using I32 = std::int32_t;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// The first line containing `needle` (fails the test if there is none).
std::string line_with(const std::string& text, const std::string& needle) {
  for (const std::string& l : lines_of(text))
    if (l.find(needle) != std::string::npos) return l;
  ADD_FAILURE() << "no line contains \"" << needle << "\" in\n" << text;
  return {};
}

std::size_t indent_of(const std::string& line) { return line.find_first_not_of(' '); }

/// Every `name:type` binder in the printed text (kernel params, op results,
/// body params).
std::vector<std::string> binders(const std::string& text) {
  static const std::regex binder(R"((?:^|[ (])([A-Za-z_][A-Za-z0-9_]*):(?:Ref\{|Sem\{|f32\[|f64\[|i32\[|i64\[|bool\[))");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), binder); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

/// The kernel used by most tests below; `line` receives the line of the
/// statement that loads into "recv".
Graph sample(int& line) {
  return trace([&](VmemRef<const float, 4, 8> x, VmemRef<float, 4, 8> y, SmemRef<I32> n) {
    x.name("x");
    y.name("y");
    n.name("n");
    auto whole = x.load();
    y.store(whole * 2.5f);
    y.at(0, ds(0, 4)) += full<float, 4>(1.0f);
    y.at(ds(1, 2, 2), all).store(x.at(ds(0, 2), all).load());
    fori_loop(0, 4, [&](Scalar<I32> i) {
      line = __LINE__; auto r = x.at(i, ds<4>(0)).load().name("recv");
      y.at(i, ds<4>(i)).store(r);
      when(i > 1, [&] { y.at(i, 7) += 1.0f; });
    });
    auto total = fori_loop(0, 3, [](Scalar<I32>, Scalar<I32> a) { return a + 2; }, Scalar<I32>(0));
    n.store(total);
    run_scoped([&](VmemRef<float, 8> scratch) {
      scratch.name("scratch");
      scratch.store(x.at(1).load());
      y.at(2).store(scratch.load());
    });
  });
}

// ---------------------------------------------------------------- text

TEST(Printer, ReadsWritesAndAccums) {
  int line = 0;
  const Graph g = sample(line);
  const std::string t = to_text(g);
  EXPECT_NE(t.find("<- x[...]"), std::string::npos) << t;          // whole load
  EXPECT_NE(t.find("y[...] <- "), std::string::npos) << t;         // whole store
  EXPECT_NE(t.find("y[0, 0:4] += "), std::string::npos) << t;      // accum through a view
  EXPECT_NE(t.find("<- x[0:2, :]"), std::string::npos) << t;       // a slice and a full dimension
  EXPECT_NE(t.find("y[1:5:2, :] <- "), std::string::npos) << t;    // strided: rows 1 and 3
  EXPECT_NE(t.find("<- x[1, :]"), std::string::npos) << t;         // an integer index
  EXPECT_NE(t.find("n[...] <- "), std::string::npos) << t;         // a rank-0 Ref
  // Kernel parameters with their types.
  EXPECT_NE(t.find("x:Ref{f32[4,8] vmem}"), std::string::npos) << t;
  EXPECT_NE(t.find("n:Ref{i32[] smem}"), std::string::npos) << t;
  EXPECT_EQ(t.rfind("{ lambda ;", 0), 0u) << t;
  // The literal 2.5 and the multiplication by it.
  EXPECT_NE(t.find("= 2.5"), std::string::npos) << t;
  EXPECT_NE(t.find("= mul "), std::string::npos) << t;
}

TEST(Printer, TracedIndicesNameTheIndexValue) {
  int line = 0;
  const Graph g = sample(line);
  const std::string t = to_text(g);
  // The loop index is the body's parameter; the views inside name it.
  const std::string loop = line_with(t, "fori_loop");
  const std::smatch m = [&] {
    std::smatch r;
    static const std::regex param(R"(\(([a-z]+):i32\[\]\))");
    EXPECT_TRUE(std::regex_search(loop, r, param)) << loop;
    return r;
  }();
  ASSERT_FALSE(m.empty());
  const std::string i = m[1];
  EXPECT_NE(t.find("<- x[" + i + ", 0:4]"), std::string::npos) << t;
  EXPECT_NE(t.find("y[" + i + ", " + i + ":" + i + "+4] <- recv"), std::string::npos) << t;
  EXPECT_NE(t.find("y[" + i + ", 7] += "), std::string::npos) << t;
}

TEST(Printer, NestedBodiesAreIndented) {
  int line = 0;
  const Graph g = sample(line);
  const std::string t = to_text(g);
  const std::string top = line_with(t, "y[...] <- ");
  const std::string loop = line_with(t, "fori_loop");  // the first loop, which has no carry
  const std::string in_loop = line_with(t, "recv:f32[4] <- ");
  const std::string when_line = line_with(t, "when ");
  const std::string in_when = line_with(t, ", 7] += ");
  const std::string scope = line_with(t, "scope[");
  const std::string in_scope = line_with(t, "scratch[...] <- ");
  const std::string yield = line_with(t, "yield ");
  EXPECT_EQ(indent_of(loop), indent_of(top));
  EXPECT_GT(indent_of(in_loop), indent_of(loop));
  EXPECT_EQ(indent_of(when_line), indent_of(in_loop));
  EXPECT_GT(indent_of(in_when), indent_of(when_line));
  EXPECT_EQ(indent_of(scope), indent_of(top));
  EXPECT_GT(indent_of(in_scope), indent_of(scope));
  EXPECT_GT(indent_of(yield), indent_of(top));  // the carry loop's yield is inside its body
  // Bodies open with "{" and their closing "}" lines come back to the owner's indentation.
  EXPECT_NE(when_line.find("{"), std::string::npos) << when_line;
  EXPECT_NE(scope.find("(scratch:Ref{f32[8] vmem}) {"), std::string::npos) << scope;
  std::size_t closes_at_top = 0;
  for (const std::string& l : lines_of(t))
    if (l.find_first_not_of(' ') != std::string::npos && l[indent_of(l)] == '}' && indent_of(l) == indent_of(top)) ++closes_at_top;
  EXPECT_EQ(closes_at_top, 3u) << t;  // two loops and the scope
}

TEST(Printer, UserNamesAndSourceLinesAppear) {
  int line = 0;
  const Graph g = sample(line);
  const std::string t = to_text(g);
  EXPECT_NE(t.find("recv:f32[4] <- x["), std::string::npos) << t;
  EXPECT_NE(t.find("scratch:Ref{f32[8] vmem}"), std::string::npos) << t;
  const std::string recv = line_with(t, "recv:f32[4]");
  EXPECT_NE(recv.find("# ir/printer_test.cpp:" + std::to_string(line)), std::string::npos) << recv;
}

TEST(Printer, FormatterMatchesToText) {
  int line = 0;
  const Graph g = sample(line);
  EXPECT_EQ(fmt::format("{}", g), to_text(g));
}

TEST(Printer, BindersAreUniqueEvenWhenUserNamesLookGenerated) {
  // The user picks names the printer would also generate ("a", "b", "c"),
  // and gives one name to several values (an unrolled C++ loop).
  const Graph g = trace([](VmemRef<const float, 4> x, VmemRef<float, 4> y) {
    auto v = x.load().name("b");
    auto w = (v * 2.0f).name("a");
    auto u = (w + 1.0f).name("c");
    for (int k = 0; k < 3; ++k) y.at(k) += x.at(k).load().name("recv");
    y.store(u + v);
  });
  const std::string t = to_text(g);
  const auto names = binders(t);
  std::map<std::string, int> seen;
  for (const std::string& n : names) ++seen[n];
  for (const auto& [n, k] : seen) EXPECT_EQ(k, 1) << "binder " << n << " defined " << k << " times in\n" << t;
  EXPECT_EQ(seen.count("recv"), 1u) << t;
  EXPECT_EQ(seen.count("c"), 1u) << t;
  // Every value used by an op has a binder.
  EXPECT_GE(names.size(), 10u) << t;
}

TEST(Printer, RunStateAndCarriesPrintTheirResults) {
  const Graph g = trace([](VmemRef<float, 4> y) {
    y.store(run_state(full<float, 4>(3.0f), [](VmemRef<float, 4> r) { r.name("state") += 1.0f; }));
  });
  const std::string t = to_text(g);
  EXPECT_NE(t.find("(state:Ref{f32[4] vmem}) {"), std::string::npos) << t;
  EXPECT_NE(t.find("state[...] += "), std::string::npos) << t;
  EXPECT_NE(t.find("<- state[...]"), std::string::npos) << t;
  EXPECT_NE(t.find("yield "), std::string::npos) << t;
}

TEST(Printer, PrimitivesWithTheirOwnPrinters) {
  const Graph g = trace([](SmemRef<I32> y, VmemRef<double> z) {
    y.store(axis_index("rows") + axis_size("cols"));
    z.store(Scalar<double>(0.125));
  });
  const std::string t = to_text(g);
  EXPECT_NE(t.find("= axis_index[axis=rows]"), std::string::npos) << t;
  EXPECT_NE(t.find("= axis_size[axis=cols]"), std::string::npos) << t;
  EXPECT_NE(t.find(":f64[] = 0.125"), std::string::npos) << t;
  EXPECT_NE(t.find(":i32[] = add "), std::string::npos) << t;
}

// ---------------------------------------------------------------- DOT

TEST(Dot, IsWellFormedWithANodePerOp) {
  int line = 0;
  const Graph g = sample(line);
  const std::string d = to_dot(g);
  EXPECT_EQ(d.rfind("digraph", 0), 0u) << d;
  ASSERT_GE(d.size(), 2u);
  EXPECT_EQ(d.substr(d.size() - 2), "}\n");
  EXPECT_EQ(count_of(d, "{"), count_of(d, "}")) << d;
  // One node per op, each declared once.
  EXPECT_EQ(count_of(d, "[label=\""), g.num_ops()) << d;
  for (std::size_t o = 0; o < g.num_ops(); ++o) EXPECT_EQ(count_of(d, "  op" + std::to_string(o) + " [label="), 1u) << o;
  // One cluster per body (two loops, one when, one scope).
  EXPECT_EQ(count_of(d, "subgraph cluster_"), 4u) << d;
  // Every statement line ends in ';', '{' or '}', and quotes are balanced.
  for (const std::string& l : lines_of(d)) {
    ASSERT_FALSE(l.empty());
    const char last = l.back();
    EXPECT_TRUE(last == ';' || last == '{' || last == '}') << l;
    std::size_t quotes = 0;
    for (std::size_t k = 0; k < l.size(); ++k)
      if (l[k] == '"' && (k == 0 || l[k - 1] != '\\')) ++quotes;
    EXPECT_EQ(quotes % 2, 0u) << l;
  }
  // Edges only between declared nodes.
  static const std::regex edge(R"(op(\d+) -> op(\d+))");
  std::size_t edges = 0;
  for (auto it = std::sregex_iterator(d.begin(), d.end(), edge); it != std::sregex_iterator(); ++it, ++edges) {
    EXPECT_LT(std::stoul((*it)[1]), g.num_ops());
    EXPECT_LT(std::stoul((*it)[2]), g.num_ops());
  }
  EXPECT_GT(edges, 0u);
}

TEST(Dot, ContainsUserNamesAndEscapesQuotes) {
  int line = 0;
  const Graph g = sample(line);
  const std::string d = to_dot(g);
  EXPECT_NE(d.find("recv"), std::string::npos) << d;
  EXPECT_NE(d.find("load x"), std::string::npos) << d;
  EXPECT_NE(d.find("printer_test.cpp:" + std::to_string(line)), std::string::npos) << d;

  const Graph q = trace([](VmemRef<float, 2> y) { y.name("say \"hi\"").store(1.0f); });
  const std::string dq = to_dot(q);
  EXPECT_NE(dq.find("say \\\"hi\\\""), std::string::npos) << dq;
}

TEST(Dot, ExtraEdgesAreDrawnWithTheirKind) {
  int line = 0;
  const Graph g = sample(line);
  const DotEdge extra[] = {{0, 1, "order"}, {1, 2, "ref"}};
  const std::string d = to_dot(g, extra);
  EXPECT_NE(d.find("op0 -> op1 [color=\"#7f7f7f\", label=\"order\"]"), std::string::npos) << d;
  EXPECT_NE(d.find("label=\"ref\""), std::string::npos) << d;
}

TEST(Dot, LabelsBreakLinesWithADotNewline) {
  int line = 0;
  const Graph g = sample(line);
  const std::string d = to_dot(g);
  // The location goes on a second line of the label: `...\nir/printer_test.cpp:N"`, with one backslash.
  EXPECT_NE(d.find("\\nir/printer_test.cpp:"), std::string::npos) << d;
  EXPECT_EQ(d.find("\\\\n"), std::string::npos) << d;
}

}  // namespace
