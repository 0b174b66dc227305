// docs/diagnostics.md lists every message refx can raise: this scans
// include/refx/**/*.hpp for string literals starting with "refx:", and for
// the text given to the functions that add that prefix (trace_error and
// friends, core/error.hpp), and fails naming each one whose text (up to its
// first format argument) the page does not contain. No refx header is
// included: this binary only reads files.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "docs/doc_pages.hpp"

namespace {

namespace fs = std::filesystem;
using refx_docs::read_file;

const fs::path& root() {
  static const fs::path r = fs::path(__FILE__).parent_path().parent_path().parent_path();
  return r;
}

/// The functions of core/error.hpp that put "refx: " (or "refx: verify: ")
/// before the text they are given; a hint(...) among their arguments is not
/// that text.
const std::map<std::string, std::string>& message_functions() {
  static const std::map<std::string, std::string> m{
      {"trace_error", "refx: "},      {"trace_error_near", "refx: "},     {"runtime_error", "refx: "},
      {"runtime_error_at", "refx: "}, {"verify_error", "refx: verify: "}, {"verify_message", "refx: verify: "},
      {"target_message", "refx: "}};
  return m;
}

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// A function-like macro: its parameters (`...` as __VA_ARGS__) and body.
struct Macro {
  std::vector<std::string> params;
  std::string body;
};

/// The text of `body` with each parameter replaced by its argument and each
/// `#parameter` by the argument as a string literal (string literals copied
/// as they are).
std::string substitute(const Macro& m, const std::vector<std::string>& args) {
  auto arg_of = [&](const std::string& id) -> const std::string* {
    for (std::size_t k = 0; k < m.params.size() && k < args.size(); ++k)
      if (m.params[k] == id) return &args[k];
    return nullptr;
  };
  std::string out;
  for (std::size_t i = 0; i < m.body.size();) {
    const char c = m.body[i];
    if (c == '"') {
      std::size_t j = i + 1;
      while (j < m.body.size() && m.body[j] != '"') j += m.body[j] == '\\' ? 2 : 1;
      out += m.body.substr(i, j + 1 - i);
      i = j + 1;
    } else if (c == '#' || identifier_char(c)) {
      std::size_t j = c == '#' ? i + 1 : i;
      while (j < m.body.size() && m.body[j] == ' ') ++j;
      std::size_t e = j;
      while (e < m.body.size() && identifier_char(m.body[e])) ++e;
      const std::string* a = arg_of(m.body.substr(j, e - j));
      if (c == '#') out += a ? "\"" + *a + "\"" : m.body.substr(i, e - i);
      else out += a ? *a : m.body.substr(i, e - i);
      i = std::max(e, i + 1);
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

/// A function-like #define of `src`: its macro and the span of its definition.
struct Definition {
  Macro macro;
  std::size_t begin, end;
};

/// The function-like macros #defined in `src`, by name.
std::map<std::string, Definition> function_macros(const std::string& src) {
  std::map<std::string, Definition> all;
  for (std::size_t at = 0; (at = src.find("#define ", at)) != std::string::npos;) {
    std::size_t end = at;
    while ((end = src.find('\n', end)) != std::string::npos && src[end - 1] == '\\') ++end;
    if (end == std::string::npos) end = src.size();
    const std::size_t n = at + 8;
    std::size_t e = n;
    while (e < end && identifier_char(src[e])) ++e;
    if (e < end && src[e] == '(') {
      const std::size_t close = src.find(')', e);
      Macro m;
      std::string p;
      for (std::size_t k = e + 1; k <= close; ++k) {
        if (src[k] == ',' || k == close) {
          if (!p.empty()) m.params.push_back(p == "..." ? "__VA_ARGS__" : p);
          p.clear();
        } else if (!std::isspace(static_cast<unsigned char>(src[k]))) {
          p += src[k];
        }
      }
      for (std::size_t k = close + 1; k < end; ++k) m.body += src[k] == '\\' || src[k] == '\n' ? ' ' : src[k];
      all[src.substr(n, e - n)] = Definition{m, at, end};
    }
    at = end;
  }
  return all;
}

/// If a call of `name` starts at `at` in `src`, replaces it by `m`'s expansion
/// (followed by the newlines the call spanned, so later lines keep their
/// numbers) and returns the position after it; else returns npos.
std::size_t expand_call(std::string& src, std::size_t at, const std::string& name, const Macro& m) {
  std::size_t open = at + name.size();
  while (open < src.size() && src[open] == ' ') ++open;
  if ((at > 0 && identifier_char(src[at - 1])) || open >= src.size() || src[open] != '(') return std::string::npos;
  std::vector<std::string> args(1);
  int depth = 0, newlines = 0;
  std::size_t k = open + 1;
  for (; k < src.size() && !(depth == 0 && src[k] == ')'); ++k) {
    const char c = src[k];
    if (c == '"') {  // a literal, whole: its commas and parentheses are text
      const std::size_t j = src.find('"', k + 1);
      args.back() += src.substr(k, j + 1 - k);
      k = j;
      continue;
    }
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    newlines += c == '\n';
    if (c == ',' && depth == 0 && args.size() < m.params.size()) args.emplace_back();
    else args.back() += c == '\n' ? ' ' : c;
  }
  for (auto& a : args) {
    a.erase(0, a.find_first_not_of(' '));
    a.erase(a.find_last_not_of(' ') + 1);
  }
  const std::string text = substitute(m, args) + std::string(static_cast<std::size_t>(newlines), '\n');
  src.replace(at, k + 1 - at, text);
  return at + text.size();
}

/// `src` with its message-stamping macros expanded: the function-like
/// #defines whose body holds a "refx:" literal (or calls such a macro), as
/// the local REFX_ macros that stamp one static_assert message per name.
/// Their definitions are blanked (a template, not a message) and every use is
/// replaced by its expansion on the use's line (line numbers kept).
std::string expand_message_macros(std::string src) {
  const std::map<std::string, Definition> all = function_macros(src);
  std::map<std::string, Macro> stamping;
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [name, d] : all) {
      bool stamps = d.macro.body.find("refx:") != std::string::npos;
      for (const auto& [other, unused] : stamping)
        stamps = stamps || d.macro.body.find(other + "(") != std::string::npos;
      if (stamps && stamping.emplace(name, d.macro).second) grew = true;
    }
  }
  for (const auto& [name, unused] : stamping) {
    const Definition& d = all.at(name);
    for (std::size_t k = d.begin; k < d.end; ++k)
      if (src[k] != '\n') src[k] = ' ';
  }
  for (bool expanded = true; expanded;) {
    expanded = false;
    for (const auto& [name, m] : stamping)
      for (std::size_t at = 0; (at = src.find(name, at)) != std::string::npos;) {
        const std::size_t after = expand_call(src, at, name, m);
        expanded = expanded || after != std::string::npos;
        at = after != std::string::npos ? after : at + name.size();
      }
  }
  return src;
}

/// Every string literal sequence (adjacent literals joined, escapes decoded)
/// of a C++ source that starts with "refx:", or that is the text given to one
/// of message_functions() (with its prefix), with its line. Comments,
/// character literals and raw strings are skipped correctly.
std::vector<std::pair<int, std::string>> refx_messages(const std::string& src) {
  std::vector<std::pair<int, std::string>> out;
  std::size_t i = 0;
  int line = 1;
  std::string prefix;    // set by a call of message_functions(), until its first literal
  bool in_hint = false;  // the next literal is a hint's, not the message
  int hint_depth = 0;    // parentheses open inside hint(...)
  auto advance = [&](std::size_t to) {
    for (; i < to && i < src.size(); ++i)
      if (src[i] == '\n') ++line;
  };
  auto skip_space_and_comments = [&] {
    while (i < src.size()) {
      if (std::isspace(static_cast<unsigned char>(src[i]))) advance(i + 1);
      else if (src.compare(i, 2, "//") == 0) advance(src.find('\n', i));
      else if (src.compare(i, 2, "/*") == 0) advance(src.find("*/", i) + 2);
      else break;
    }
  };
  auto read_literal = [&] {  // at the opening quote; returns the decoded text
    std::string s;
    advance(i + 1);
    while (i < src.size() && src[i] != '"') {
      if (src[i] == '\\' && i + 1 < src.size()) {
        const char c = src[i + 1];
        s += c == 'n' ? '\n' : c == 't' ? '\t' : c;
        advance(i + 2);
      } else {
        s += src[i];
        advance(i + 1);
      }
    }
    advance(i + 1);
    return s;
  };
  while (i < src.size()) {
    const char c = src[i];
    if (src.compare(i, 2, "//") == 0 || src.compare(i, 2, "/*") == 0) {
      skip_space_and_comments();
    } else if (c == '\'') {
      std::size_t j = i + 1;
      while (j < src.size() && src[j] != '\'') j += src[j] == '\\' ? 2 : 1;
      advance(j + 1);
    } else if (c == 'R' && src.compare(i + 1, 1, "\"") == 0) {
      const std::size_t open = src.find('(', i);
      const std::string close = ")" + src.substr(i + 2, open - i - 2) + "\"";
      advance(src.find(close, open) + close.size());
    } else if (c == '"') {
      const int at = line;
      std::string s = read_literal();
      for (skip_space_and_comments(); i < src.size() && src[i] == '"'; skip_space_and_comments()) s += read_literal();
      if (s.starts_with("refx:")) out.push_back({at, s});
      else if (!prefix.empty() && !in_hint) out.push_back({at, prefix + s});
      if (!in_hint) prefix.clear();
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
      const std::string word = src.substr(i, j - i);
      if (const auto f = message_functions().find(word); f != message_functions().end()) prefix = f->second;
      if (word == "hint" && !prefix.empty()) in_hint = true;
      advance(j);  // an identifier: an `R` inside one does not start a raw string
    } else {
      if (in_hint && c == '(') ++hint_depth;
      if (in_hint && c == ')' && --hint_depth == 0) in_hint = false;
      if (c == ';' || c == '{' || c == '}') prefix.clear(), in_hint = false, hint_depth = 0;
      advance(i + 1);
    }
  }
  return out;
}

/// The message with every format argument ({}, {:.3f}, %s, ...) written `{}`,
/// cut at the first argument (or brace) once at least 12 characters of text
/// follow "refx:" (so "refx: {}: {} (at {})" stays whole, and "refx: deadlock in
/// kernel '{}' on mesh ..." becomes "refx: deadlock in kernel '").
std::string message_key(const std::string& message) {
  std::string key;
  std::size_t text = 0;
  for (std::size_t i = 0; i < message.size(); ++i) {
    const char c = message[i];
    const bool fmt_arg = c == '{' && !(i + 1 < message.size() && message[i + 1] == '{');
    const bool printf_arg =
        c == '%' && i + 1 < message.size() && std::isalpha(static_cast<unsigned char>(message[i + 1]));
    // Any brace ends the key: a literal that is not a format string prints
    // "{{" as is, a format string prints "{".
    if ((c == '{' || printf_arg) && text >= 12) return key;
    if (fmt_arg || printf_arg) {
      key += "{}";
      i = fmt_arg ? message.find('}', i) : i + 1;
      if (i == std::string::npos) break;
      continue;
    }
    if (c == '{' || c == '}') ++i;  // {{ and }} are literal braces
    if (c == '\n') break;           // further lines list details
    key += c;
    if (key.size() > 5 && !std::isspace(static_cast<unsigned char>(c))) ++text;
  }
  return key;
}

// The local macros that stamp one message per name (REFX_... in ref_operands.hpp,
// ring.hpp, ...) are read through their uses, not as a bare "refx: " template.
TEST(Diagnostics, StampedMessagesAreReadWhereTheMacroIsUsed) {
  const std::string src =
      "#define STAMP(name, rest) \\\n"
      "  static_assert(false, \"refx: \" #name rest);\n"
      "#define STAMP_BOTH(rest) STAMP(first, rest) STAMP(second, rest)\n"
      "STAMP(alone, \" takes a Value\")\n"
      "STAMP_BOTH(\" needs a Ref; read it\"\n"
      "           \" first\")\n"
      "const char* plain = \"refx: plain\";\n";
  std::vector<std::pair<int, std::string>> expected{{4, "refx: alone takes a Value"},
                                                    {5, "refx: first needs a Ref; read it first"},
                                                    {5, "refx: second needs a Ref; read it first"},
                                                    {7, "refx: plain"}};
  EXPECT_EQ(refx_messages(expand_message_macros(src)), expected);
}

TEST(Diagnostics, EveryRefxMessageIsDocumented) {
  if (!fs::exists(root() / "include" / "refx")) GTEST_SKIP() << "sources not found at " << root();
  std::string doc = read_file(root() / "docs" / "diagnostics.md");
  for (std::size_t at = 0; (at = doc.find("\\|", at)) != std::string::npos;) doc.erase(at, 1);  // table escapes
  std::map<std::string, std::string> keys;  // key -> first header:line
  for (const auto& e : fs::recursive_directory_iterator(root() / "include" / "refx")) {
    if (e.path().extension() != ".hpp") continue;
    const std::string rel = fs::relative(e.path(), root()).generic_string();
    for (const auto& [line, message] : refx_messages(expand_message_macros(read_file(e.path()))))
      keys.emplace(message_key(message), rel + ":" + std::to_string(line));
  }
  EXPECT_GT(keys.size(), 100u) << "the scan found too few messages";
  std::vector<std::string> missing;
  for (const auto& [key, where] : keys)
    if (doc.find(key) == std::string::npos) missing.push_back(where + ": " + key);
  std::string list;
  for (const auto& m : missing) list += "\n  " + m;
  EXPECT_TRUE(missing.empty()) << missing.size() << " of " << keys.size()
                               << " refx: messages are not in docs/diagnostics.md (each shown up to its first "
                                  "format argument, written {}):"
                               << list;
}

TEST(Diagnostics, MessageKeys) {
  EXPECT_EQ(message_key("refx: deadlock in kernel '{}' on mesh {}"), "refx: deadlock in kernel '");
  EXPECT_EQ(message_key("refx: {}: {} (at {})"), "refx: {}: {} (at {})");
  EXPECT_EQ(message_key("refx: effects_barrier at thread exit: %s\n"), "refx: effects_barrier at thread exit: ");
  EXPECT_EQ(message_key("refx: device {:>3}: {}"), "refx: device {}: {}");
  EXPECT_EQ(message_key("refx: a Mesh needs an axis, e.g. Mesh{{\"x\", 4}}"), "refx: a Mesh needs an axis, e.g. Mesh");
  const auto found =
      refx_messages("// \"refx: not this\"\nauto c = '\"'; f(\"refx: a \" /* x */ \"b {}\", R\"(refx: raw)\");");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].first, 2);
  EXPECT_EQ(found[0].second, "refx: a b {}");
}

}  // namespace
