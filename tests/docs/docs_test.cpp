// Checks on the pages themselves (README.md and docs/*.md; the rules are in
// doc_pages.hpp):
//   - every ```cpp block is a complete program (compiled and run by
//     docs.Samples.*) or a fragment equal to a region of a compiled source;
//   - every [snippet:NAME] region of examples/ and tests/ is quoted somewhere;
//   - markers are known and sit right before a block;
//   - outputs name the test that records them.
// No refx header is included: this binary only reads files.

#include <gtest/gtest.h>

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

}  // namespace
