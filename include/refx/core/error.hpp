#pragma once
// Errors raised at trace, verify and run time. Each names the user's source
// line; run-time errors also name the device.

#include <cmath>
#include <fmt/format.h>

#include <refx/config.hpp>
#include <refx/core/source_location.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace refx {

/// Where a user's call came from, printed as `file:line`.
struct SourceLoc {
  const char* file = "";
  std::uint32_t line = 0;

  SourceLoc() = default;
  SourceLoc(refx::source_location l) noexcept : file(l.file_name()), line(l.line()) {}  // NOLINT: implicit on purpose
#if !REFX_HAS_STD_SOURCE_LOCATION && REFX_HAS_STD_SOURCE_LOCATION_TYPE
  SourceLoc(const std::source_location& l) noexcept
      : file(l.file_name()), line(l.line()) {}  // NOLINT: implicit on purpose
#endif
  bool known() const noexcept { return line != 0; }
};

/// Base of every refx error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A kernel broke a rule that tracing can see (shapes, bounds, scopes, aliasing).
class TraceError : public Error {
 public:
  using Error::Error;
};

/// A traced graph failed verification (hazards, unbalanced semaphores).
class VerifyError : public Error {
 public:
  using Error::Error;
};

/// A failure while a kernel ran: deadlock, device exception, exit invariant.
class RuntimeError : public Error {
 public:
  using Error::Error;
};

/// A host-side argument refx cannot take, found before any trace: a negative
/// `ds` size, a zero stride, a Shape of more than 6 dimensions.
class ArgumentError : public Error {
 public:
  using Error::Error;
};

}  // namespace refx

template <>
struct fmt::formatter<refx::SourceLoc> : fmt::formatter<std::string_view> {
  format_context::iterator format(const refx::SourceLoc& l, format_context& ctx) const;
};

namespace refx {

/// What to do instead: the text after "(at <loc>); " in a message. Build it
/// with `hint("...")` or `hint("... {} ...", args...)`.
struct Hint {
  std::string text;
};
template <class... Args>
Hint hint(fmt::format_string<Args...> f, Args&&... args) {
  return Hint{fmt::format(f, std::forward<Args>(args)...)};
}

namespace detail {
/// "refx: <what> (at <loc>)", then "; <hint>" when there is one: the one shape
/// of every message that names the user's line ("near" instead of "at" when
/// the line is only the last one traced, the operation having none).
template <class... Args>
std::string located_message_where(std::string_view where, SourceLoc loc, const Hint* h,
                                  fmt::format_string<Args...> what, Args&&... args) {
  std::string m = fmt::format("refx: {} ({} {})", fmt::format(what, std::forward<Args>(args)...), where, loc);
  if (h != nullptr) {
    m += "; ";
    m += h->text;
  }
  return m;
}
template <class... Args>
std::string located_message(SourceLoc loc, const Hint* h, fmt::format_string<Args...> what, Args&&... args) {
  return located_message_where("at", loc, h, what, std::forward<Args>(args)...);
}
/// "12.5 MiB": a byte count for a person (negative ones too).
inline std::string human_bytes(std::int64_t b) {
  const double a = std::abs(static_cast<double>(b));
  if (a >= double(1 << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
  if (a >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
  return fmt::format("{} B", b);
}
}  // namespace detail

/// Throws a TraceError "refx: <what> (at <loc>)": a rule broken while tracing.
template <class... Args>
[[noreturn]] void trace_error(SourceLoc loc, fmt::format_string<Args...> what, Args&&... args) {
  throw TraceError(detail::located_message(loc, nullptr, what, std::forward<Args>(args)...));
}
/// Throws a TraceError "refx: <what> (at <loc>); <hint>".
template <class... Args>
[[noreturn]] void trace_error(SourceLoc loc, const Hint& h, fmt::format_string<Args...> what, Args&&... args) {
  throw TraceError(detail::located_message(loc, &h, what, std::forward<Args>(args)...));
}

/// Throws a TraceError "refx: <what> (near <loc>)[; <hint>]": for an operation
/// that carries no line of its own, `loc` being the last line traced.
template <class... Args>
[[noreturn]] void trace_error_near(SourceLoc loc, fmt::format_string<Args...> what, Args&&... args) {
  throw TraceError(detail::located_message_where("near", loc, nullptr, what, std::forward<Args>(args)...));
}
template <class... Args>
[[noreturn]] void trace_error_near(SourceLoc loc, const Hint& h, fmt::format_string<Args...> what, Args&&... args) {
  throw TraceError(detail::located_message_where("near", loc, &h, what, std::forward<Args>(args)...));
}

/// The RuntimeError "refx: <what> (at <loc>)": a failure of a running kernel
/// at the user's line (returned, for the callers that throw it later).
template <class... Args>
RuntimeError runtime_error_at(SourceLoc loc, fmt::format_string<Args...> what, Args&&... args) {
  return RuntimeError(detail::located_message(loc, nullptr, what, std::forward<Args>(args)...));
}
/// Throws runtime_error_at(loc, what, args...).
template <class... Args>
[[noreturn]] void runtime_error(SourceLoc loc, fmt::format_string<Args...> what, Args&&... args) {
  throw runtime_error_at(loc, what, std::forward<Args>(args)...);
}

/// "refx: verify: <what>": a hazard the verifier found (the message names the
/// lines of both ends itself). verify_message for a warning, verify_error to throw.
template <class... Args>
std::string verify_message(fmt::format_string<Args...> what, Args&&... args) {
  return "refx: verify: " + fmt::format(what, std::forward<Args>(args)...);
}
template <class... Args>
[[noreturn]] void verify_error(fmt::format_string<Args...> what, Args&&... args) {
  throw VerifyError(verify_message(what, std::forward<Args>(args)...));
}

}  // namespace refx

#if REFX_DEFINITIONS
REFX_DECL fmt::format_context::iterator fmt::formatter<refx::SourceLoc>::format(const refx::SourceLoc& l,
                                                                                format_context& ctx) const {
  // Formatted through fmt::format (compiled into libfmt) rather than
  // format_to(ctx.out()), which would instantiate fmt's whole formatting
  // engine in every translation unit that names a SourceLoc.
  if (!l.known()) return fmt::formatter<std::string_view>::format("<unknown>", ctx);
  std::string_view f = l.file;
  // Keep the path short but unambiguous: the last two components.
  auto cut = f.rfind('/');
  if (cut != std::string_view::npos && cut > 0) {
    auto cut2 = f.rfind('/', cut - 1);
    if (cut2 != std::string_view::npos) f.remove_prefix(cut2 + 1);
  }
  return fmt::formatter<std::string_view>::format(fmt::format("{}:{}", f, l.line), ctx);
}
#endif  // REFX_DEFINITIONS
