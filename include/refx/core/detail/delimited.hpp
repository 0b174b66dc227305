#pragma once
// Delimited text (CSV with RFC 4180 quoting, or tab-separated) as rows of
// fields with their line numbers: what refx::tune writes back and reads,
// and the measurement tables refx::calibrate reads. A quoted field may hold
// the separator, doubled quotes and newlines; in CSV an unquoted field's
// commas inside brackets are its own (a shape, bf16[512,8192]).

#include <cstdint>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <refx/core/error.hpp>

namespace refx::detail {

struct DelimitedRow {
  std::int64_t line = 0;  ///< where the row starts, from 1
  std::vector<std::string> fields;
};

/// The separator of `text`: a tab if its first line has one, else a comma.
inline char sniff_separator(std::string_view text) {
  const std::string_view first = text.substr(0, text.find('\n'));
  return first.find('\t') != std::string_view::npos ? '\t' : ',';
}

/// Splits `text` into rows; blank lines are skipped. Throws refx::Error
/// naming `source` and the line of a quote that never closes.
inline std::vector<DelimitedRow> parse_delimited(std::string_view text, char sep, std::string_view source) {
  std::vector<DelimitedRow> rows;
  DelimitedRow row;
  std::string field;
  std::int64_t line = 1;
  row.line = 1;
  bool quoted = false, any = false;
  std::int64_t quote_line = 0;
  int brackets = 0;  // a comma inside [...] is a shape's (bf16[512,8192]), not a separator
  const auto end_row = [&] {
    if (any || !field.empty() || !row.fields.empty()) {
      row.fields.push_back(std::move(field));
      rows.push_back(std::move(row));
    }
    row = DelimitedRow{};
    field.clear();
    any = false;
    brackets = 0;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && field.empty()) {
      quoted = any = true;
      quote_line = line;
    } else if (c == '[' || c == ']') {
      brackets += c == '[' ? 1 : -1;
      field += c;
    } else if (c == sep && (sep != ',' || brackets <= 0)) {
      row.fields.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n') {
      end_row();
      row.line = ++line;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) throw Error(fmt::format("refx: {}:{}: a quoted field never closes", source, quote_line));
  end_row();
  return rows;
}

/// The whole file at `path`; throws refx::Error naming it when it cannot be read.
inline std::string read_text_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("refx: {}: cannot read '{}'", what, path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The whole of `s` as a finite number, or nothing.
inline std::optional<double> parse_number(const std::string& s) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

/// `s` as one CSV field: quoted when it holds a comma, a quote or a newline.
inline std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

}  // namespace refx::detail
