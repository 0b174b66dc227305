// Checks on the pages themselves (README.md and docs/*.md; the rules are in
// doc_pages.hpp):
//   - every ```cpp block is a complete program (compiled and run by
//     docs.Samples.*) or a fragment equal to a region of a compiled source;
//   - every [snippet:NAME] region of examples/ and tests/ is quoted somewhere;
//   - markers are known and sit right before a block;
//   - outputs name the test that records them;
//   - every relative link reaches a file, and its #anchor a heading there.
// No refx header is included: this binary only reads files.

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "docs/doc_pages.hpp"

namespace {

namespace fs = std::filesystem;
using namespace refx_docs;

const fs::path& root() {
  static const fs::path r = fs::path(__FILE__).parent_path().parent_path().parent_path();
  return r;
}

bool sources_present() { return fs::exists(root() / "docs") && fs::exists(root() / "include" / "refx"); }

struct LoadedPage {
  std::string path;
  Page page;
};

const std::vector<LoadedPage>& pages() {
  static const std::vector<LoadedPage> all = [] {
    std::vector<LoadedPage> out;
    for (const std::string& p : doc_pages(root())) out.push_back({p, parse_page(read_file(root() / p))});
    return out;
  }();
  return all;
}

/// A fragment must quote a source that a test or example target compiles.
bool is_compiled_source(const std::string& path) {
  const fs::path p(path);
  if (path.find("..") != std::string::npos) return false;
  const auto parts = std::vector<fs::path>(p.begin(), p.end());
  // An example's own header is compiled with it (examples/flash_attention.hpp).
  if (parts.size() == 2 && parts[0] == "examples") return p.extension() == ".cpp" || p.extension() == ".hpp";
  return p.extension() == ".cpp" && parts.size() == 3 && parts[0] == "tests" &&
         parts[2].stem().string().ends_with("_test");
}

/// examples/*.cpp, examples/*.hpp and tests/<area>/*_test.cpp, relative to the root.
std::vector<std::string> compiled_sources() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(root() / "examples"))
    if (e.path().extension() == ".cpp" || e.path().extension() == ".hpp")
      out.push_back("examples/" + e.path().filename().string());
  for (const auto& area : fs::directory_iterator(root() / "tests")) {
    if (!area.is_directory()) continue;
    for (const auto& e : fs::directory_iterator(area.path())) {
      const std::string rel = "tests/" + area.path().filename().string() + "/" + e.path().filename().string();
      if (is_compiled_source(rel)) out.push_back(rel);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Docs, FragmentsQuoteACompiledSourceVerbatim) {
  if (!sources_present()) GTEST_SKIP() << "sources not found at " << root();
  int fragments = 0;
  for (const auto& [path, page] : pages())
    for (const Block& b : page.blocks) {
      if (!b.is_fragment()) continue;
      ++fragments;
      const Marker& m = *b.marker;
      const std::string where = path + ":" + std::to_string(b.fence_line);
      if (!is_compiled_source(m.path)) {
        ADD_FAILURE() << where << ": a fragment must quote examples/*.cpp (or an example's .hpp) or tests/<area>/*_test.cpp, not '" << m.path << "'";
        continue;
      }
      if (!fs::exists(root() / m.path)) {
        ADD_FAILURE() << where << ": quotes " << m.path << ", which does not exist";
        continue;
      }
      const auto regions = regions_of(read_file(root() / m.path));
      const auto r = regions.find(m.name);
      if (r == regions.end()) {
        ADD_FAILURE() << where << ": " << m.path << " has no region '// [snippet:" << m.name << "]' ... '// [/snippet]'";
        continue;
      }
      EXPECT_EQ(b.body, r->second) << where << ": the fragment differs from region '" << m.name << "' of " << m.path;
    }
  EXPECT_GT(fragments, 0);
}

TEST(Docs, EverySnippetRegionIsQuoted) {
  if (!sources_present()) GTEST_SKIP() << "sources not found at " << root();
  std::set<std::pair<std::string, std::string>> quoted;
  for (const auto& [path, page] : pages())
    for (const Block& b : page.blocks)
      if (b.is_fragment()) quoted.insert({b.marker->path, b.marker->name});
  for (const std::string& source : compiled_sources())
    for (const auto& [name, text] : regions_of(read_file(root() / source)))
      EXPECT_TRUE(quoted.contains({source, name}))
          << source << ": region '" << name << "' is quoted by no page (<!-- fragment: " << source << "#" << name << " -->)";
}

TEST(Docs, MarkersAreKnownAndComeRightBeforeABlock) {
  if (!sources_present()) GTEST_SKIP() << "sources not found at " << root();
  for (const auto& [path, page] : pages()) {
    std::set<int> before_a_block;
    for (const Block& b : page.blocks)
      if (b.marker) before_a_block.insert(b.marker->line);
    for (const Marker& m : page.markers) {
      const std::string where = path + ":" + std::to_string(m.line);
      if (m.kind != "fragment" && m.kind != "output") continue;  // other HTML comments are prose
      EXPECT_TRUE(before_a_block.contains(m.line)) << where << ": a <!-- " << m.kind << ": --> marker must be the line right before a ``` fence";
      EXPECT_FALSE(m.path.empty() || m.name.empty()) << where << ": write <!-- " << m.kind << ": PATH#NAME -->";
    }
    for (const Block& b : page.blocks) {
      EXPECT_TRUE(b.closed) << path << ":" << b.fence_line << ": the fenced block is never closed";
      if (b.is_fragment()) {
        EXPECT_TRUE(b.is_cpp()) << path << ":" << b.fence_line << ": only ```cpp blocks are fragments";
      }
    }
  }
}

TEST(Docs, OutputsNameTheTestThatRecordsThem) {
  if (!sources_present()) GTEST_SKIP() << "sources not found at " << root();
  for (const auto& [path, page] : pages())
    for (const Block& b : page.blocks) {
      if (!b.marker || b.marker->kind != "output") continue;
      const Marker& m = *b.marker;
      const std::string where = path + ":" + std::to_string(b.fence_line);
      ASSERT_TRUE(m.path.starts_with("tests/docs/") && is_compiled_source(m.path))
          << where << ": outputs are recorded by tests/docs/*_test.cpp, not " << m.path;
      EXPECT_NE(read_file(root() / m.path).find("DOC_OUTPUT(\"" + m.name + "\")"), std::string::npos)
          << where << ": " << m.path << " records no DOC_OUTPUT(\"" << m.name << "\")";
    }
}

TEST(Docs, CompiledSamplesAreCompletePrograms) {
  if (!sources_present()) GTEST_SKIP() << "sources not found at " << root();
  std::set<std::string> names;
  for (const auto& [path, page] : pages())
    for (const CompiledSample& s : compiled_samples(path, page)) {
      EXPECT_NE(s.block->body.find("int main("), std::string::npos)
          << path << ":" << s.block->fence_line
          << ": a ```cpp block is a complete program with int main() (docs.Samples." << s.test_name
          << "), or is marked <!-- fragment: PATH#NAME -->";
      EXPECT_TRUE(names.insert(s.test_name).second) << "two samples named " << s.test_name;
    }
}

/// The anchor GitHub gives a heading: its text without links' targets and
/// code marks, lower case, punctuation dropped, spaces as '-'.
std::string anchor_of(std::string heading) {
  heading = std::regex_replace(heading, std::regex(R"(\[([^\]]*)\]\([^)]*\))"), "$1");
  std::string out;
  for (char c : trim(heading)) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || u >= 0x80) out += static_cast<char>(std::tolower(u));
    else if (c == ' ') out += '-';
  }
  return out;
}

/// The anchors of a page's headings (outside fenced blocks); a repeated
/// heading gets -1, -2, ... as on GitHub.
std::set<std::string> anchors_of(const std::string& text) {
  std::set<std::string> out;
  std::map<std::string, int> seen;
  bool fenced = false;
  for (const std::string& line : lines_of(text)) {
    if (trim(line).starts_with("```")) fenced = !fenced;
    if (fenced || !line.starts_with("#")) continue;
    const std::string a = anchor_of(line.substr(line.find_first_not_of('#')));
    const int n = seen[a]++;
    out.insert(n == 0 ? a : a + "-" + std::to_string(n));
  }
  return out;
}

TEST(Docs, RelativeLinksReachAFileAndAHeading) {
  if (!sources_present()) GTEST_SKIP() << "sources not found at " << root();
  const std::regex link(R"(\]\(([^)\s]+)\))");
  const std::regex code_span("`[^`]*`");
  const std::regex scheme("^[a-zA-Z][a-zA-Z0-9+.-]*:");  // http:, mailto:
  int checked = 0;
  for (const std::string& page : doc_pages(root())) {
    const auto lines = lines_of(read_file(root() / page));
    bool fenced = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (trim(lines[i]).starts_with("```")) fenced = !fenced;
      if (fenced) continue;
      const std::string prose = std::regex_replace(lines[i], code_span, "");
      for (auto m = std::sregex_iterator(prose.begin(), prose.end(), link); m != std::sregex_iterator(); ++m) {
        const std::string target = (*m)[1];
        if (std::regex_search(target, scheme)) continue;
        const auto hash = target.find('#');
        const std::string file = target.substr(0, hash);
        const fs::path resolved = file.empty() ? root() / page : (root() / page).parent_path() / file;
        const std::string where = page + ":" + std::to_string(i + 1) + ": " + target;
        ++checked;
        if (!fs::exists(resolved)) {
          ADD_FAILURE() << where << ": no such file";
          continue;
        }
        if (hash == std::string::npos || resolved.extension() != ".md") continue;
        EXPECT_TRUE(anchors_of(read_file(resolved)).contains(target.substr(hash + 1)))
            << where << ": no heading with that anchor in " << resolved.lexically_relative(root()).string();
      }
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
