#pragma once
// Replay tokens (docs/runtime.md, "Controlled schedules"): one schedule of
// one kernel as text that survives a shell and a CI log,
//   rs1-<kernel>-<fingerprint>-<lanes>L<entry><checks>[x<calls>]-<choices>
// The fingerprint hashes the kernel's program (its ops, their source lines)
// and mesh; entry is 'a' (apart) or 't' (together), checks 'r' with the
// race detector or 'n' without, then xN for N calls (ExploreOptions::calls)
// when more than one; the choices are each step's index among the enabled
// points, runs of zeros (the default point) written zN, trailing zeros
// dropped.

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <refx/core/error.hpp>
#include <refx/ir/printer.hpp>
#include <refx/runtime/program.hpp>

namespace refx::detail {

inline constexpr std::string_view schedule_token_version = "rs1";

struct ScheduleToken {
  std::string kernel;  ///< the kernel's name, letters, digits and '_' only
  std::uint64_t fingerprint = 0;
  std::int32_t lanes = 0;
  bool apart = false;
  bool races = true;
  std::int32_t calls = 1;  ///< ExploreOptions::calls
  std::vector<std::uint32_t> choices;
};

inline std::string token_name(std::string_view name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s.empty() ? std::string("_") : s;
}

/// FNV-1a over the program's text and its mesh.
inline std::uint64_t program_fingerprint(const Program& p) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto add = [&](std::string_view s) {
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  };
  add(to_text(p.graph));
  add(p.mesh.describe());
  add(fmt::format("cores={}", p.mesh.cores()));
  return h;
}

inline std::string encode(const ScheduleToken& t) {
  std::size_t end = t.choices.size();
  while (end > 0 && t.choices[end - 1] == 0) --end;
  std::string c;
  for (std::size_t i = 0; i < end;) {
    if (!c.empty()) c += '.';
    if (t.choices[i] == 0) {
      std::size_t j = i;
      while (j < end && t.choices[j] == 0) ++j;
      c += fmt::format("z{}", j - i);
      i = j;
    } else {
      c += fmt::format("{}", t.choices[i++]);
    }
  }
  return fmt::format("{}-{}-{:016x}-{}L{}{}{}-{}", schedule_token_version, token_name(t.kernel), t.fingerprint, t.lanes,
                     t.apart ? 'a' : 't', t.races ? 'r' : 'n',
                     t.calls > 1 ? fmt::format("x{}", t.calls) : std::string(), c.empty() ? "z0" : c);
}

/// The token's parts; throws refx::Error (prefixed by `where`) for text that is not one.
inline ScheduleToken decode(std::string_view text, std::string_view where) {
  const auto bad = [&](std::string_view what) {
    return Error(
        fmt::format("refx: {}: '{}' is not a replay token ({}; refx::explore prints them as "
                    "{}-<kernel>-<fingerprint>-<lanes>L<entry><checks>[x<calls>]-<choices>)",
                    where, text, what, schedule_token_version));
  };
  std::vector<std::string_view> parts;
  for (std::size_t at = 0;;) {
    const std::size_t dash = text.find('-', at);
    parts.push_back(text.substr(at, dash == std::string_view::npos ? std::string_view::npos : dash - at));
    if (dash == std::string_view::npos) break;
    at = dash + 1;
  }
  if (parts.size() != 5) throw bad(fmt::format("{} fields separated by '-', not 5", parts.size()));
  if (parts[0] != schedule_token_version)
    throw Error(
        fmt::format("refx: {}: the replay token is version '{}'; this refx replays version '{}' (rerun "
                    "explore with this refx for a new token)",
                    where, parts[0], schedule_token_version));
  ScheduleToken t;
  t.kernel = std::string(parts[1]);
  const auto number = [&](std::string_view s, auto& v, int base, std::string_view what) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) throw bad(fmt::format("bad {} '{}'", what, s));
  };
  number(parts[2], t.fingerprint, 16, "fingerprint");
  const std::string_view mesh = parts[3];
  const std::size_t l = mesh.find('L');
  if (l == std::string_view::npos || l + 3 > mesh.size() || (mesh[l + 1] != 'a' && mesh[l + 1] != 't') ||
      (mesh[l + 2] != 'r' && mesh[l + 2] != 'n') || (l + 3 < mesh.size() && mesh[l + 3] != 'x'))
    throw bad(fmt::format("bad lanes, entry, checks and calls '{}'", mesh));
  number(mesh.substr(0, l), t.lanes, 10, "lane count");
  t.apart = mesh[l + 1] == 'a';
  t.races = mesh[l + 2] == 'r';
  if (l + 3 < mesh.size()) {
    number(mesh.substr(l + 4), t.calls, 10, "call count");
    if (t.calls < 2) throw bad(fmt::format("a call count of {} (one call has no 'x')", t.calls));
  }
  for (std::size_t at = 0; at <= parts[4].size();) {
    std::size_t dot = parts[4].find('.', at);
    if (dot == std::string_view::npos) dot = parts[4].size();
    const std::string_view c = parts[4].substr(at, dot - at);
    if (!c.empty() && c[0] == 'z') {
      std::size_t zeros = 0;
      number(c.substr(1), zeros, 10, "run of zeros");
      if (zeros > (std::size_t{1} << 24)) throw bad(fmt::format("a run of {} zeros", zeros));
      t.choices.insert(t.choices.end(), zeros, 0);
    } else {
      std::uint32_t v = 0;
      number(c, v, 10, "choice");
      t.choices.push_back(v);
    }
    at = dot + 1;
  }
  return t;
}

}  // namespace refx::detail
