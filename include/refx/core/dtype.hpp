#pragma once
// Element types a Ref or Value may hold, and the mapping from C++ types.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include <refx/config.hpp>

namespace refx {

enum class DType : std::uint8_t { pred, i32, i64, f32, f64 };

template <class T>
struct dtype_of;  // undefined: not an element type
template <> struct dtype_of<bool> { static constexpr DType value = DType::pred; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };

/// True for the element types refx supports (const-qualified or not).
template <class T>
concept Element = requires { dtype_of<std::remove_const_t<T>>::value; };

template <Element T>
inline constexpr DType dtype_v = dtype_of<std::remove_const_t<T>>::value;

constexpr std::size_t size_of(DType t) noexcept {
  switch (t) {
    case DType::pred: return 1;
    case DType::i32: case DType::f32: return 4;
    case DType::i64: case DType::f64: return 8;
  }
  return 0;
}

constexpr std::string_view name_of(DType t) noexcept {
  switch (t) {
    case DType::pred: return "bool";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
  }
  return "?";
}

constexpr bool is_floating(DType t) noexcept { return t == DType::f32 || t == DType::f64; }
constexpr bool is_integral(DType t) noexcept { return t == DType::i32 || t == DType::i64; }

template <class T>
struct type_tag { using type = T; };

/// Calls `f(type_tag<T>{})` with the C++ type of `t`.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::pred: return f(type_tag<bool>{});
    case DType::i32: return f(type_tag<std::int32_t>{});
    case DType::i64: return f(type_tag<std::int64_t>{});
    case DType::f32: return f(type_tag<float>{});
    case DType::f64: break;
  }
  return f(type_tag<double>{});
}

}  // namespace refx

template <>
struct fmt::formatter<refx::DType> : fmt::formatter<std::string_view> {
  format_context::iterator format(refx::DType t, format_context& ctx) const;
};

// Out of line, so that naming these in a message does not instantiate fmt's
// string writer in every translation unit.
#if REFX_DEFINITIONS
REFX_DECL fmt::format_context::iterator fmt::formatter<refx::DType>::format(refx::DType t, format_context& ctx) const {
  return fmt::formatter<std::string_view>::format(refx::name_of(t), ctx);
}
#endif  // REFX_DEFINITIONS
