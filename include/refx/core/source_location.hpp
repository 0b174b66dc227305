#pragma once
// refx::source_location: std::source_location where the compiler provides it
// and evaluates it at the call, otherwise a small stand-in with the same
// members built from __builtin_FILE, __builtin_LINE, __builtin_COLUMN and
// __builtin_FUNCTION. The stand-in serves
//   - clang 14 with libstdc++, which lacks __builtin_source_location;
//   - clang 15, whose std::source_location (its current(), as a default argument)
//     names the function's declaration, not its caller (fixed in clang 16),
//     while __builtin_LINE there names the caller.
// Every refx entry point that records the user's line takes a
// refx::source_location; on a conforming compiler it is the same type as
// std::source_location, and the stand-in converts from one where <source_location> exists.

#include <cstdint>
#include <version>

#if defined(__clang__) && !defined(__apple_build_version__) && __clang_major__ < 16
#define REFX_SOURCE_LOCATION_AT_CALL 0
#else
#define REFX_SOURCE_LOCATION_AT_CALL 1
#endif

#if defined(__cpp_lib_source_location) && __cpp_lib_source_location >= 201907L && REFX_SOURCE_LOCATION_AT_CALL
#include <source_location>
namespace refx {
using source_location = std::source_location;
}  // namespace refx
#define REFX_HAS_STD_SOURCE_LOCATION 1
#define REFX_HAS_STD_SOURCE_LOCATION_TYPE 1
#elif defined(__has_builtin) && __has_builtin(__builtin_FILE) && __has_builtin(__builtin_LINE)
#if defined(__cpp_lib_source_location) && __cpp_lib_source_location >= 201907L
#include <source_location>
#define REFX_HAS_STD_SOURCE_LOCATION_TYPE 1
#else
#define REFX_HAS_STD_SOURCE_LOCATION_TYPE 0
#endif
namespace refx {
/// The fallback: the members of std::source_location that refx uses.
struct source_location {
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* function = __builtin_FUNCTION(),
                                           std::uint_least32_t line = __builtin_LINE(),
                                           std::uint_least32_t column = __builtin_COLUMN()) noexcept {
    source_location l;
    l.file_ = file;
    l.function_ = function;
    l.line_ = line;
    l.column_ = column;
    return l;
  }
  constexpr source_location() noexcept = default;
#if REFX_HAS_STD_SOURCE_LOCATION_TYPE
  /// A std::source_location the user took themselves (clang 15 records it
  /// right where it is not a default argument).
  constexpr source_location(const std::source_location& l) noexcept  // NOLINT: implicit on purpose
      : file_(l.file_name()), function_(l.function_name()), line_(l.line()), column_(l.column()) {}
#endif
  constexpr std::uint_least32_t line() const noexcept { return line_; }
  constexpr std::uint_least32_t column() const noexcept { return column_; }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  std::uint_least32_t line_ = 0;
  std::uint_least32_t column_ = 0;
};
}  // namespace refx
#define REFX_HAS_STD_SOURCE_LOCATION 0
#else
#error \
    "refx: this compiler has neither std::source_location nor __builtin_FILE/__builtin_LINE; use g++ >= 11 or clang++ >= 14"
#endif
