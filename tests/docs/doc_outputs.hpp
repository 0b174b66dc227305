#pragma once
// What a page shows as a program's output: a block right after
//   <!-- output: tests/docs/<file>_test.cpp#NAME -->
// must equal what that file records with
//   DOC_OUTPUT("NAME") { ...; return text; }
// (line numbers in `file.cpp:123` written `file.cpp:N`). The file's binary
// checks it with one line at namespace scope:
//   TEST(Docs, OutputsMatchThePages) { refx_docs::expect_outputs_match(__FILE__); }
// Every recorded output must be shown by some page.

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "docs/doc_pages.hpp"

namespace refx_docs {

struct RecordedOutput {
  std::string file;
  std::string name;
  std::string (*make)();
};

inline std::vector<RecordedOutput>& recorded_outputs() {
  static std::vector<RecordedOutput> all;
  return all;
}

inline bool record_output(const char* file, const char* name, std::string (*make)()) {
  recorded_outputs().push_back({file, name, make});
  return true;
}

/// `path/file.cpp:123` -> `path/file.cpp:N` (also .hpp and .md).
inline std::string without_line_numbers(const std::string& text) {
  static const std::regex at(R"(([\w./-]+\.(?:cpp|hpp|md)):[0-9]+)");
  return std::regex_replace(text, at, "$1:N");
}

inline void expect_outputs_match(const char* this_file) {
  namespace fs = std::filesystem;
  const fs::path file(this_file);
  const fs::path root = file.parent_path().parent_path().parent_path();
  if (!fs::exists(root / "docs")) GTEST_SKIP() << "sources not found at " << root;
  const std::string rel = fs::relative(file, root).generic_string();
  std::map<std::string, std::string (*)()> mine;
  for (const RecordedOutput& o : recorded_outputs())
    if (o.file == this_file) mine[o.name] = o.make;
  std::set<std::string> shown;
  for (const std::string& path : doc_pages(root)) {
    const Page page = parse_page(read_file(root / path));
    for (const Block& b : page.blocks) {
      if (!b.marker || b.marker->kind != "output" || b.marker->path != rel) continue;
      const std::string where = path + ":" + std::to_string(b.fence_line);
      const auto it = mine.find(b.marker->name);
      if (it == mine.end()) {
        ADD_FAILURE() << where << ": " << rel << " records no DOC_OUTPUT(\"" << b.marker->name << "\")";
        continue;
      }
      shown.insert(it->first);
      EXPECT_EQ(b.body, without_line_numbers(it->second()))
          << where << ": the page differs from output '" << it->first << "' of " << rel;
    }
  }
  for (const auto& [name, make] : mine)
    EXPECT_TRUE(shown.contains(name)) << rel << ": output '" << name << "' is shown by no page (<!-- output: " << rel
                                      << "#" << name << " -->)";
}

}  // namespace refx_docs

#define REFX_DOC_CAT2(a, b) a##b
#define REFX_DOC_CAT(a, b) REFX_DOC_CAT2(a, b)
#define DOC_OUTPUT(name)                                                                                  \
  static std::string REFX_DOC_CAT(refx_doc_output_, __LINE__)();                                          \
  [[maybe_unused]] static const bool REFX_DOC_CAT(refx_doc_output_recorded_, __LINE__) =                  \
      ::refx_docs::record_output(__FILE__, name, &REFX_DOC_CAT(refx_doc_output_, __LINE__));              \
  static std::string REFX_DOC_CAT(refx_doc_output_, __LINE__)()
