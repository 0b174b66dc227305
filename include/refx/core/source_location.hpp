#pragma once
// refx::source_location: std::source_location where the compiler provides it,
// otherwise (clang 14 with libstdc++, which lacks __builtin_source_location)
// a small stand-in with the same members built from __builtin_FILE,
// __builtin_LINE, __builtin_COLUMN and __builtin_FUNCTION. Every refx entry
// point that records the user's line takes a refx::source_location; on a
// conforming compiler it is the same type as std::source_location.

#include <cstdint>
#include <version>

#if defined(__cpp_lib_source_location) && __cpp_lib_source_location >= 201907L
#include <source_location>
namespace refx {
using source_location = std::source_location;
}  // namespace refx
#define REFX_HAS_STD_SOURCE_LOCATION 1
#elif defined(__has_builtin) && __has_builtin(__builtin_FILE) && __has_builtin(__builtin_LINE)
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
