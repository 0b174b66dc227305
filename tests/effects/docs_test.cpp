// docs/effects.md quotes examples/ordered_effects.cpp: every region between
// `// [snippet:NAME]` and `// [/snippet]` in the example appears verbatim
// (minus its common indentation) after `<!-- snippet: NAME -->` in the doc.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::map<std::string, std::string> snippets_of(const std::string& text) {
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

TEST(Docs, QuoteTheExampleVerbatim) {
  const auto root = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  const auto example = root / "examples" / "ordered_effects.cpp", doc = root / "docs" / "effects.md";
  if (!std::filesystem::exists(example)) GTEST_SKIP() << "sources not found at " << root;
  ASSERT_TRUE(std::filesystem::exists(doc)) << doc;
  const auto snippets = snippets_of(read_all(example));
  ASSERT_FALSE(snippets.empty());
  const auto lines = lines_of(read_all(doc));
  std::map<std::string, int> quoted;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string t = trim(lines[i]);
    if (!t.starts_with("<!-- snippet: ")) continue;
    const std::string name = trim(t.substr(14, t.find("-->") - 14));
    ASSERT_TRUE(snippets.contains(name)) << "docs/effects.md quotes unknown snippet " << name;
    ASSERT_LT(i + 1, lines.size());
    ASSERT_EQ(trim(lines[i + 1]), "```cpp") << "snippet " << name;
    std::string body;
    for (std::size_t j = i + 2; j < lines.size() && trim(lines[j]) != "```"; ++j) body += lines[j] + "\n";
    EXPECT_EQ(body, snippets.at(name)) << "docs/effects.md's copy of snippet '" << name
                                       << "' differs from examples/ordered_effects.cpp";
    ++quoted[name];
  }
  for (const auto& [name, text] : snippets)
    EXPECT_TRUE(quoted.contains(name)) << "snippet " << name << " is not quoted in docs/effects.md";
}

}  // namespace
