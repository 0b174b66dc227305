// Build tool: writes the compiled samples of README.md and docs/*.md (every
// ```cpp block not marked as a fragment; see doc_pages.hpp) into one C++
// file that tests/docs/samples_test.cpp includes. Each sample goes into a
// namespace of its own, with its #include lines moved to the top of the file
// and `#line` directives, so that compiler errors and refx's source locations
// name the page and line of the sample (e.g. "docs/tutorial.md:42"). Each
// sample's main() becomes the test docs.Samples.<page>_<heading>.
//
//   refx_doc_samples ROOT OUTPUT
//
// OUTPUT is rewritten only when its text changes.

#include <cstdio>
#include <set>

#include "doc_pages.hpp"

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s ROOT OUTPUT\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1], output = argv[2];
  std::vector<std::string> includes;
  std::set<std::string> seen_includes;
  std::string bodies, tests;
  int count = 0;
  for (const std::string& page_path : refx_docs::doc_pages(root)) {
    const refx_docs::Page page = refx_docs::parse_page(refx_docs::read_file(root / page_path));
    for (const auto& s : refx_docs::compiled_samples(page_path, page)) {
      ++count;
      const std::string ns = "refx_doc_sample_" + s.test_name;
      const std::string where = "\"" + escape(page_path) + "\"";
      bodies += "namespace " + ns + " {\n";
      bodies += "#line " + std::to_string(s.block->fence_line + 1) + " " + where + "\n";
      bool has_main = false;
      for (const std::string& line : refx_docs::lines_of(s.block->body)) {
        const std::string t = refx_docs::trim(line);
        if (t.starts_with("#include")) {
          if (seen_includes.insert(t).second) includes.push_back(t);
          bodies += "\n";  // keeps the line numbers
          continue;
        }
        has_main = has_main || t.starts_with("int main(");
        bodies += line + "\n";
      }
      if (!has_main)
        bodies += "#line " + std::to_string(s.block->fence_line) + " " + where +
                  "\n#error \"this ```cpp sample has no int main(): a sample is a complete program, or is marked "
                  "<!-- fragment: PATH#NAME --> and quotes a region of a compiled source\"\n";
      bodies += "}  // namespace " + ns + "\n";
      tests += "TEST(Samples, " + s.test_name + ") {\n  EXPECT_EQ(" + ns + "::main(), 0) << \"the sample at " +
               escape(page_path) + ":" + std::to_string(s.block->fence_line) + " returned non-zero\";\n}\n";
    }
  }
  std::string text = "// Generated from README.md and docs/*.md by tests/docs/extract_samples.cpp: " +
                     std::to_string(count) + " samples. Do not edit.\n";
  for (const std::string& inc : includes) text += inc + "\n";
  text += "\n" + bodies + "#line 1 \"doc_samples.inc (tests)\"\n" + tests;
  if (refx_docs::read_file(output) == text) return 0;
  std::filesystem::create_directories(output.parent_path());
  std::ofstream(output, std::ios::binary) << text;
  return 0;
}
