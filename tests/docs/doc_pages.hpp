#pragma once
// The pages whose code samples tests/docs checks, and how samples are found
// in them. Standard library only: the sample extractor (a build tool) and the
// checks share it.
//
// A fenced block that opens with ```cpp (or ```c++) is a C++ sample. The line
// right before its opening fence decides what kind:
//
//   <!-- fragment: PATH#NAME -->   a fragment: the block equals the region of
//                                  PATH (a compiled source, relative to the
//                                  repository root) between the lines
//                                  `// [snippet:NAME]` and `// [/snippet]`,
//                                  minus the region's common indentation;
//   anything else                  a complete program (#includes, declarations,
//                                  `int main()` returning 0 on success), which
//                                  docs.Samples.* compiles and runs.
//
// `<!-- output: PATH#NAME -->` before a block of any language: the block is
// what the test source PATH (under tests/docs/) records under NAME with
// DOC_OUTPUT("NAME"); PATH's own test binary compares them.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace refx_docs {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

inline std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

/// The pages checked: README.md and docs/*.md, relative to `root`, sorted.
inline std::vector<std::string> doc_pages(const std::filesystem::path& root) {
  std::vector<std::string> pages{"README.md"};
  for (const auto& e : std::filesystem::directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") pages.push_back("docs/" + e.path().filename().string());
  std::sort(pages.begin() + 1, pages.end());
  return pages;
}

/// A `<!-- kind: PATH#NAME -->` line.
struct Marker {
  std::string kind;  ///< "fragment" or "output" (anything else is reported as unknown)
  std::string path;
  std::string name;
  int line = 0;  ///< 1-based
};

inline std::optional<Marker> marker_of(const std::string& line, int number) {
  const std::string t = trim(line);
  if (!t.starts_with("<!--") || !t.ends_with("-->")) return std::nullopt;
  const std::string inner = trim(t.substr(4, t.size() - 7));
  const auto colon = inner.find(':');
  if (colon == std::string::npos) return std::nullopt;
  Marker m;
  m.kind = trim(inner.substr(0, colon));
  if (m.kind.empty() || !std::all_of(m.kind.begin(), m.kind.end(), [](char c) { return std::islower(c) || c == '-'; }))
    return std::nullopt;
  const std::string arg = trim(inner.substr(colon + 1));
  const auto hash = arg.find('#');
  m.path = trim(arg.substr(0, hash));
  m.name = hash == std::string::npos ? std::string{} : trim(arg.substr(hash + 1));
  m.line = number;
  return m;
}

/// One fenced block of a page.
struct Block {
  std::string lang;     ///< after the opening fence, e.g. "cpp", "text", ""
  int fence_line = 0;   ///< 1-based line of the opening fence
  std::string body;     ///< the lines between the fences, each with its '\n'
  std::optional<Marker> marker;  ///< the marker on the line right before the fence
  std::string heading;  ///< text of the nearest heading above the block
  bool closed = false;

  bool is_cpp() const { return lang == "cpp" || lang == "c++" || lang == "C++"; }
  bool is_fragment() const { return marker && marker->kind == "fragment"; }
  bool is_compiled_sample() const { return is_cpp() && !is_fragment(); }
};

struct Page {
  std::vector<Block> blocks;
  std::vector<Marker> markers;  ///< every marker line, in order
};

inline Page parse_page(const std::string& text) {
  Page page;
  const auto lines = lines_of(text);
  std::string heading;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string t = trim(lines[i]);
    if (lines[i].starts_with("#")) {
      heading = trim(t.substr(t.find_first_not_of('#')));
      continue;
    }
    if (auto m = marker_of(lines[i], static_cast<int>(i + 1))) {
      page.markers.push_back(*m);
      continue;
    }
    if (!t.starts_with("```")) continue;
    Block b;
    b.lang = trim(t.substr(3));
    b.fence_line = static_cast<int>(i + 1);
    b.heading = heading;
    if (i > 0) b.marker = marker_of(lines[i - 1], static_cast<int>(i));
    // A fence inside a list item is indented; so is its content.
    const std::size_t indent = lines[i].find_first_not_of(' ');
    std::size_t j = i + 1;
    for (; j < lines.size() && trim(lines[j]) != "```"; ++j) {
      const std::string& l = lines[j];
      const std::size_t lead = std::min(indent, l.find_first_not_of(' ') == std::string::npos ? l.size() : l.find_first_not_of(' '));
      b.body += l.substr(lead) + "\n";
    }
    b.closed = j < lines.size();
    page.blocks.push_back(std::move(b));
    i = j;
  }
  return page;
}

/// The `// [snippet:NAME]` ... `// [/snippet]` regions of a source file, each
/// with the region's common indentation removed.
inline std::map<std::string, std::string> regions_of(const std::string& source) {
  std::map<std::string, std::string> out;
  std::string name;
  std::vector<std::string> body;
  for (const std::string& line : lines_of(source)) {
    const std::string t = trim(line);
    if (t.starts_with("// [snippet:") && t.ends_with("]")) {
      name = t.substr(12, t.size() - 13);
      body.clear();
    } else if (t == "// [/snippet]" && !name.empty()) {
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

/// A C++ identifier from free text: lower case, runs of other characters
/// become one '_'.
inline std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "sample" : out;
}

/// A compiled sample of a page, with the name of its test.
struct CompiledSample {
  std::string page;  ///< e.g. "docs/tutorial.md"
  std::string test_name;
  const Block* block = nullptr;
};

/// The compiled samples of one page; test names are `<page stem>_<heading>`,
/// with `_2`, `_3`, ... for further samples under one heading.
inline std::vector<CompiledSample> compiled_samples(const std::string& page_path, const Page& page) {
  std::vector<CompiledSample> out;
  std::map<std::string, int> seen;
  const std::string stem = slug(std::filesystem::path(page_path).stem().string());
  for (const Block& b : page.blocks) {
    if (!b.is_compiled_sample()) continue;
    std::string name = stem + "_" + slug(b.heading.empty() ? "top" : b.heading);
    if (const int k = ++seen[name]; k > 1) name += "_" + std::to_string(k);
    out.push_back({page_path, name, &b});
  }
  return out;
}

}  // namespace refx_docs
