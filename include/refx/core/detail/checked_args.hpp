#pragma once
// Argument types for the public entry points that take plain numbers and
// names, so that a wrong kind of argument stops at the user's line with one
// `refx:` sentence instead of converting silently (a 1.5 device id truncated
// to 1) or failing deep inside refx:
//   AxisName            a mesh axis name: a string literal, std::string or
//                       std::string_view; never 0 or nullptr
//   IntArg<T, What>     an integer whose every value T holds (a shift, a
//                       collective id); never floating point, bool, wider,
//                       or unsigned of T's width
// Each rejecting constructor is a template holding a static_assert, chosen
// over the accepting one by overload resolution, so nothing else is
// instantiated after the message (no cascade).

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace refx {

namespace detail {
template <class>
inline constexpr bool dependent_false = false;

/// U and T are integer types (not bool) and every value of U is a value of T:
/// the same signedness at the same or a greater width, or unsigned into a
/// wider signed type. Signed into unsigned never is (a negative value would
/// wrap around), and neither is unsigned into signed of the same width (a u32
/// above 2^31 - 1 would become negative).
template <class U, class T>
inline constexpr bool integer_lossless_v = [] {
  using A = std::remove_cv_t<U>;
  using B = std::remove_cv_t<T>;
  if constexpr (!std::is_integral_v<A> || !std::is_integral_v<B> || std::is_same_v<A, bool> ||
                std::is_same_v<B, bool>) {
    return false;
  } else if constexpr (std::is_signed_v<A> == std::is_signed_v<B>) {
    return sizeof(A) <= sizeof(B);
  } else {
    return std::is_unsigned_v<A> && sizeof(A) < sizeof(B);
  }
}();

/// U converts into a T element although not every value of U fits, because
/// the value is checked while tracing (a TraceError naming the line when it
/// does not fit): `int`, an integer literal's type, into any integer element
/// type; a signed 64-bit integer (std::int64_t: refx's sizes, extents and the
/// `constexpr std::int64_t kRows = 16` of a port) where a 32-bit integer is
/// expected. Every C++ integer is known while tracing, so nothing narrows
/// silently; what stays a compile error is a sign change the type says may
/// not fit (std::size_t into an i32, a signed integer into a u32).
template <class U, class T>
inline constexpr bool integer_range_checked_v =
    std::is_integral_v<std::remove_cv_t<T>> && !std::is_same_v<std::remove_cv_t<T>, bool> &&
    (std::is_same_v<std::remove_cv_t<U>, int> ||
     (std::is_same_v<std::remove_cv_t<T>, std::int32_t> && std::is_integral_v<std::remove_cv_t<U>> &&
      std::is_signed_v<std::remove_cv_t<U>> && sizeof(U) == 8));

}  // namespace detail

/// A mesh axis name ("x"). Converts to std::string_view.
class AxisName {
 public:
  constexpr AxisName(std::string_view name) noexcept : name_(name) {}  // NOLINT: implicit on purpose
  AxisName(const std::string& name) noexcept : name_(name) {}          // NOLINT: implicit on purpose
  template <std::size_t N>
  constexpr AxisName(const char (&name)[N]) noexcept : name_(name, N - 1) {}  // NOLINT: implicit on purpose
  /// A `const char*` that may be null: a null one is an empty name, reported
  /// by the collective or axis query that looks it up.
  template <class P>
    requires std::is_same_v<P, const char*> || std::is_same_v<P, char*>
  constexpr AxisName(P name) noexcept : name_(name == nullptr ? std::string_view{} : std::string_view{name}) {}
  template <class N>
    requires std::is_same_v<N, std::nullptr_t>
  AxisName(N) {  // NOLINT
    static_assert(detail::dependent_false<N>,
                  "refx: an axis name is a string such as \"x\" (the name of a mesh axis), not nullptr");
  }
  template <class N>
    requires std::is_arithmetic_v<N>
  AxisName(N) {  // NOLINT
    static_assert(detail::dependent_false<N>,
                  "refx: an axis name is a string such as \"x\" (the name of a mesh axis), not a number; "
                  "axes are named, not numbered");
  }
  constexpr operator std::string_view() const noexcept { return name_; }  // NOLINT: implicit on purpose
  constexpr std::string_view view() const noexcept { return name_; }

 private:
  std::string_view name_;
};

/// What an IntArg is, for its message.
enum class IntArgKind { shift, collective_id };

/// An integer argument of at most T's width; floating point and bool are
/// rejected (they would be truncated or mean something else).
template <class T, IntArgKind What>
class IntArg {
 public:
  template <class U>
    requires detail::integer_lossless_v<U, T>
  constexpr IntArg(U v) noexcept : v_(static_cast<T>(v)) {}  // NOLINT: implicit on purpose
  template <class U>
    requires(std::is_arithmetic_v<U> && !detail::integer_lossless_v<U, T>)
  IntArg(U) {  // NOLINT
    if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool> && sizeof(U) <= sizeof(T)) {
      static_assert(detail::dependent_false<U>,
                    "refx: an unsigned integer of 64 bits (std::size_t, std::uint64_t) where a signed 64-bit integer "
                    "(a shift or collective id) is expected may not fit (a value above 2^63 - 1 would become "
                    "negative); convert it explicitly with static_cast<std::int64_t>(...)");
    } else if constexpr (What == IntArgKind::shift) {
      static_assert(
          detail::dependent_false<U>,
          "refx: a shift along an axis is an integer number of positions (e.g. +1 or -1), not a floating-point "
          "number or bool; convert it explicitly with static_cast<std::int64_t>(...)");
    } else {
      static_assert(detail::dependent_false<U>,
                    "refx: a collective id is an integer (e.g. 0), not a floating-point number or bool; convert it "
                    "explicitly with static_cast<std::int64_t>(...)");
    }
  }
  constexpr operator T() const noexcept { return v_; }  // NOLINT: implicit on purpose

 private:
  T v_ = 0;
};

}  // namespace refx
