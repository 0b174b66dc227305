#pragma once
// A small recursive-descent JSON reader for tests that check documents refx
// writes (the timeline's Chrome Trace Event JSON). Strict enough to reject
// what a viewer would reject: trailing commas, bad escapes, trailing text.

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace refx::testing::json {

struct Value {
  enum class Kind { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;

  /// The member `key` of an object, or nullptr.
  const Value* find(std::string_view key) const {
    for (const auto& [k, v] : object)
      if (k == key) return &v;
    return nullptr;
  }
  const Value& at(std::string_view key) const {
    if (const Value* v = find(key)) return *v;
    throw std::runtime_error("json: no member '" + std::string(key) + "'");
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }
  /// The string member `key`, or "" when absent or not a string.
  std::string str(std::string_view key) const {
    const Value* v = find(key);
    return v && v->kind == Kind::string ? v->string : std::string();
  }
  /// The number member `key`, or `fallback`.
  double num(std::string_view key, double fallback = 0) const {
    const Value* v = find(key);
    return v && v->kind == Kind::number ? v->number : fallback;
  }
};

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}
  Value document() {
    Value v = value();
    space();
    if (i_ != s_.size()) fail("trailing text");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("json: " + what + " at offset " + std::to_string(i_));
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  Value value() {
    space();
    if (i_ >= s_.size()) fail("unexpected end");
    Value v;
    const char c = s_[i_];
    if (c == '{') {
      v.kind = Value::Kind::object;
      ++i_;
      if (eat('}')) return v;
      do {
        space();
        std::string key = string();
        expect(':');
        v.object.emplace_back(std::move(key), value());
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      v.kind = Value::Kind::array;
      ++i_;
      if (eat(']')) return v;
      do v.array.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Value::Kind::string;
      v.string = string();
    } else if (word("true")) {
      v.kind = Value::Kind::boolean;
      v.boolean = true;
    } else if (word("false")) {
      v.kind = Value::Kind::boolean;
    } else if (word("null")) {
    } else {
      const std::string rest(s_.substr(i_, 64));
      char* end = nullptr;
      v.kind = Value::Kind::number;
      v.number = std::strtod(rest.c_str(), &end);
      if (end == rest.c_str()) fail("bad value");
      i_ += static_cast<std::size_t>(end - rest.c_str());
    }
    return v;
  }
  std::string string() {
    if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string");
    ++i_;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c == '\\') {
        if (i_ >= s_.size()) fail("unfinished escape");
        c = s_[i_++];
        switch (c) {
          case '"':
          case '\\':
          case '/': out += c; break;
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': {
            if (i_ + 4 > s_.size()) fail("short \\u escape");
            const unsigned code = static_cast<unsigned>(std::stoul(std::string(s_.substr(i_, 4)), nullptr, 16));
            i_ += 4;
            // As UTF-8 (surrogate pairs, which refx does not write, become '?').
            if (code < 0x80) {
              out += static_cast<char>(code);
            } else if (code < 0x800) {
              out += static_cast<char>(0xc0 | (code >> 6));
              out += static_cast<char>(0x80 | (code & 0x3f));
            } else if (code < 0xd800 || code > 0xdfff) {
              out += static_cast<char>(0xe0 | (code >> 12));
              out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
              out += static_cast<char>(0x80 | (code & 0x3f));
            } else {
              out += '?';
            }
            break;
          }
          default: fail("bad escape");
        }
      } else {
        out += c;
      }
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return out;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

/// Parses a whole document; throws std::runtime_error naming the offset.
inline Value parse(std::string_view text) { return Parser(text).document(); }

}  // namespace refx::testing::json
