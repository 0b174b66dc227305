// The examples of docs/graph.md. The doc quotes the regions between
// [snippet:...] markers verbatim, and the printed graphs it shows after
// <!-- output: name --> are what these kernels print (source lines left out);
// DocsQuoteTheseExamplesVerbatim fails when either drifts.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "graph/graph_testing.hpp"

using namespace refx;

namespace {

std::string without_locations(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (const auto at = line.find("  # "); at != std::string::npos) line.resize(at);
    out += line + "\n";
  }
  return out;
}

std::map<std::string, std::string>& outputs() {
  static std::map<std::string, std::string> o;
  return o;
}

// [snippet:overlap]
// Send x to the right neighbour; meanwhile compute b from a. The compute is
// written after the wait, as a first draft would have it.
auto permute_and_compute = [](HbmRef<const float, 4096> x, VmemRef<const float, 256> a, HbmRef<float, 4096> y,
                              VmemRef<float, 256> b) {
  auto right = (axis_index("x") + 1) % axis_size("x");
  run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
    auto copy = make_async_remote_copy(x, y, send, recv, right);
    copy.start();
    copy.wait();
    b.store(exp(a.load()) * 2.0f);  // does not touch x or y
  });
};
// [/snippet]

void overlap_example() {
  const Mesh mesh{{"x", 4}};
  // [snippet:compile]
  auto exe = kernel(permute_and_compute).compile(mesh);  // verify, dce, schedule, fuse
  fmt::print("{}", exe.graph());                         // the scheduled program
  // [/snippet]
  outputs()["overlap-schedule"] = without_locations(to_text(exe.graph()));
  const std::string text = to_text(exe.graph());
  EXPECT_LT(text.find("dma_start"), text.find("fused[exp"));
  EXPECT_LT(text.find("fused[exp"), text.find("dma_wait"));
  passes::Options plain;
  plain.schedule = plain.fuse = false;
  outputs()["overlap-unscheduled"] = without_locations(to_text(kernel(permute_and_compute).passes(plain).compile(mesh).graph()));
}
TEST(Docs, TheScheduleOverlapsTheCopyWithTheCompute) { overlap_example(); }

void hazard_example() {
  // [snippet:hazard]
  auto racy = [](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto copy = make_async_copy(x, y, sem);
      copy.start();
      x.store(full<float, 16>(0.0f));  // the copy may still be reading x
      copy.wait();
    });
  };
  // [/snippet]
  try {
    passes::verify(trace(racy));
    FAIL() << "no VerifyError";
  } catch (const VerifyError& e) {
    // Keep the file names, drop the line numbers (they move as this file changes).
    const std::string out = std::regex_replace(e.what(), std::regex("docs_test\\.cpp:[0-9]+"), "docs_test.cpp:N");
    outputs()["hazard-message"] = out + "\n";
  }
}
TEST(Docs, AHazardNamesBothLines) { hazard_example(); }

void fusion_example() {
  // [snippet:fusion]
  auto relu_axpby = [](SmemRef<const float> a, SmemRef<const float> b, VmemRef<const float, 1024> x,
                       VmemRef<const float, 1024> y, VmemRef<float, 1024> out) {
    out.store(max(a.load() * x.load() + b.load() * y.load(), 0.0f));
  };
  Graph g = trace(relu_axpby);
  passes::run_pipeline(g);
  // [/snippet]
  outputs()["fusion"] = without_locations(to_text(g));
  EXPECT_EQ(refx::testing::count_ops(g, "fused"), 1u);
}
TEST(Docs, FusionMakesOneLoop) { fusion_example(); }

// ---- the doc quotes the above

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}
std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string{} : s.substr(b, e - b + 1);
}
std::map<std::string, std::string> snippets(const std::string& text) {
  std::map<std::string, std::string> out;
  std::string name;
  std::vector<std::string> body;
  for (const std::string& line : lines_of(text)) {
    const std::string t = trim(line);
    if (t.starts_with("// [snippet:") && t.ends_with("]")) {
      name = t.substr(12, t.size() - 13);
      body.clear();
    } else if (t == "// [/snippet]") {
      std::size_t indent = std::string::npos;
      for (const auto& b : body)
        if (!trim(b).empty()) indent = std::min(indent, b.find_first_not_of(' '));
      std::string joined;
      for (const auto& b : body) joined += (b.size() >= indent ? b.substr(indent) : trim(b)) + "\n";
      out[name] = joined;
      name.clear();
    } else if (!name.empty()) {
      body.push_back(line);
    }
  }
  return out;
}

TEST(Docs, DocsQuoteTheseExamplesVerbatim) {
  const auto root = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  const auto doc = root / "docs" / "graph.md";
  if (!std::filesystem::exists(root / "tests" / "graph" / "docs_test.cpp")) GTEST_SKIP() << "sources not found at " << root;
  ASSERT_TRUE(std::filesystem::exists(doc)) << doc;
  overlap_example();
  hazard_example();
  fusion_example();
  if (const char* dir = std::getenv("REFX_GRAPH_DOCS_DUMP"))  // regenerate the doc's outputs
    for (const auto& [name, text] : outputs()) std::ofstream(std::filesystem::path(dir) / (name + ".txt")) << text;
  const auto code = snippets(read_all(root / "tests" / "graph" / "docs_test.cpp"));
  const auto lines = lines_of(read_all(doc));
  std::map<std::string, int> quoted;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string t = trim(lines[i]);
    const bool is_code = t.starts_with("<!-- snippet: "), is_output = t.starts_with("<!-- output: ");
    if (!is_code && !is_output) continue;
    const std::size_t skip = is_code ? 14 : 13;
    const std::string name = trim(t.substr(skip, t.find("-->") - skip));
    ASSERT_LT(i + 1, lines.size());
    std::string body;
    for (std::size_t j = i + 2; j < lines.size() && trim(lines[j]) != "```"; ++j) body += lines[j] + "\n";
    if (is_code) {
      ASSERT_TRUE(code.contains(name)) << "docs/graph.md quotes unknown snippet " << name;
      EXPECT_EQ(body, code.at(name)) << "snippet '" << name << "' in docs/graph.md differs from tests/graph/docs_test.cpp";
      ++quoted[name];
    } else {
      ASSERT_TRUE(outputs().contains(name)) << "docs/graph.md shows unknown output " << name;
      EXPECT_EQ(body, outputs().at(name)) << "output '" << name << "' in docs/graph.md differs from what the example prints";
    }
  }
  for (const auto& [name, text] : code) EXPECT_TRUE(quoted.contains(name)) << "snippet " << name << " is not quoted in docs/graph.md";
}

}  // namespace
