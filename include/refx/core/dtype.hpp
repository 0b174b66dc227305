#pragma once
// Element types a Ref or Value may hold, and the mapping from C++ types.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include <refx/config.hpp>
#include <refx/core/float16.hpp>
#include <refx/core/float8.hpp>

namespace refx {

/// Element types. The numbering is part of graphs (attributes hold it) and
/// stays stable: new types are appended.
enum class DType : std::uint8_t { pred, i32, i64, f32, f64, bf16, f16, i8, u8, u32, f8e4m3fn, f8e5m2 };
inline constexpr DType last_dtype = DType::f8e5m2;

template <class T>
struct dtype_of;  // undefined: not an element type
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::pred;
};
template <>
struct dtype_of<std::int8_t> {
  static constexpr DType value = DType::i8;
};
template <>
struct dtype_of<std::uint8_t> {
  static constexpr DType value = DType::u8;
};
template <>
struct dtype_of<std::int32_t> {
  static constexpr DType value = DType::i32;
};
template <>
struct dtype_of<std::uint32_t> {
  static constexpr DType value = DType::u32;
};
template <>
struct dtype_of<std::int64_t> {
  static constexpr DType value = DType::i64;
};
template <>
struct dtype_of<bf16> {
  static constexpr DType value = DType::bf16;
};
template <>
struct dtype_of<f16> {
  static constexpr DType value = DType::f16;
};
template <>
struct dtype_of<f8e4m3fn> {
  static constexpr DType value = DType::f8e4m3fn;
};
template <>
struct dtype_of<f8e5m2> {
  static constexpr DType value = DType::f8e5m2;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::f64;
};

/// True for the element types refx supports (const-qualified or not).
template <class T>
concept Element = requires { dtype_of<std::remove_const_t<T>>::value; };

template <Element T>
inline constexpr DType dtype_v = dtype_of<std::remove_const_t<T>>::value;

/// Floating-point element types: f32, f64, bf16, f16, f8e4m3fn, f8e5m2.
template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<std::remove_cv_t<T>> || is_narrow_float_v<T>;
/// Integer element types (bool is not one).
template <class T>
inline constexpr bool is_integer_v =
    std::is_integral_v<std::remove_cv_t<T>> && !std::is_same_v<std::remove_cv_t<T>, bool>;
/// What elements of T are computed in: f32 for bf16, f16 and the f8 types, T itself otherwise.
template <class T>
using compute_t = std::conditional_t<is_narrow_float_v<T>, float, std::remove_cv_t<T>>;
/// A C++ number that can stand for an element (a literal): arithmetic types, bf16, f16, f8e4m3fn, f8e5m2.
template <class T>
inline constexpr bool is_number_v = std::is_arithmetic_v<std::remove_cv_t<T>> || is_narrow_float_v<T>;

constexpr std::size_t size_of(DType t) noexcept {
  switch (t) {
    case DType::pred:
    case DType::i8:
    case DType::u8:
    case DType::f8e4m3fn:
    case DType::f8e5m2: return 1;
    case DType::bf16:
    case DType::f16: return 2;
    case DType::i32:
    case DType::u32:
    case DType::f32: return 4;
    case DType::i64:
    case DType::f64: return 8;
  }
  return 0;
}

constexpr std::string_view name_of(DType t) noexcept {
  switch (t) {
    case DType::pred: return "bool";
    case DType::i8: return "i8";
    case DType::u8: return "u8";
    case DType::i32: return "i32";
    case DType::u32: return "u32";
    case DType::i64: return "i64";
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f8e4m3fn: return "f8e4m3fn";
    case DType::f8e5m2: return "f8e5m2";
  }
  return "?";
}

constexpr bool is_floating(DType t) noexcept {
  return t == DType::f32 || t == DType::f64 || t == DType::bf16 || t == DType::f16 || t == DType::f8e4m3fn ||
         t == DType::f8e5m2;
}
constexpr bool is_integral(DType t) noexcept {
  return t == DType::i32 || t == DType::i64 || t == DType::i8 || t == DType::u8 || t == DType::u32;
}
constexpr bool is_unsigned(DType t) noexcept { return t == DType::u8 || t == DType::u32; }

template <class T>
struct type_tag {
  using type = T;
};

/// Calls `f(type_tag<T>{})` with the C++ type of `t`.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::pred: return f(type_tag<bool>{});
    case DType::i8: return f(type_tag<std::int8_t>{});
    case DType::u8: return f(type_tag<std::uint8_t>{});
    case DType::i32: return f(type_tag<std::int32_t>{});
    case DType::u32: return f(type_tag<std::uint32_t>{});
    case DType::i64: return f(type_tag<std::int64_t>{});
    case DType::bf16: return f(type_tag<bf16>{});
    case DType::f16: return f(type_tag<f16>{});
    case DType::f32: return f(type_tag<float>{});
    case DType::f8e4m3fn: return f(type_tag<f8e4m3fn>{});
    case DType::f8e5m2: return f(type_tag<f8e5m2>{});
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
