#pragma once
// The functors behind the elementwise primitives (elementwise.hpp): one per
// op, each saying which element types it accepts and computing one element.
// Apart from the primitives so that the fused loop (fused.hpp) can name them
// without the primitives' registration.

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <refx/ir/vector_math.hpp>

namespace refx::detail {

// (clang-format 15 would break the line after "template")
// clang-format off
template <class F, class T>
concept accepts = F::template accepts<T>;
// clang-format on

// Signed integer arithmetic wraps around (two's complement), as in XLA: it is
// done in the unsigned type, so overflow is neither undefined behaviour nor a
// trap (INT_MIN / -1 raises SIGFPE on x86 when computed directly).
template <class T>
constexpr bool wraps = std::is_integral_v<T> && std::is_signed_v<T>;
template <class T>
T wrap_neg(T a) {
  if constexpr (wraps<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(a)));
  } else {
    return static_cast<T>(-a);
  }
}

// One functor a line, as a table (clang-format would spread each over eight).
// clang-format off
struct Neg { template <class T> static constexpr bool accepts = !std::is_same_v<T, bool>; template <class T> T operator()(T a) const { return wrap_neg(a); } };
struct Abs { template <class T> static constexpr bool accepts = !std::is_same_v<T, bool>; template <class T> T operator()(T a) const {
  if constexpr (std::is_floating_point_v<T>) return std::fabs(a);  // abs(-0.0) is +0.0
  else return a < T{} ? wrap_neg(a) : a; } };
// The transcendental functions: `vector` names their vectorised f32 kernel
// (ir/vector_math.hpp: f32, and bf16 / f16 through f32); the scalar call is
// the f64 path (the C++ library's).
struct Exp { static constexpr MathFn vector = MathFn::exp; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::exp(a); } };
struct Log { static constexpr MathFn vector = MathFn::log; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::log(a); } };
struct Log1p { static constexpr MathFn vector = MathFn::log1p; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::log1p(a); } };
struct Expm1 { static constexpr MathFn vector = MathFn::expm1; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::expm1(a); } };
struct Sqrt { static constexpr MathFn vector = MathFn::sqrt; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::sqrt(a); } };
struct Rsqrt { static constexpr MathFn vector = MathFn::rsqrt; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return T{1} / std::sqrt(a); } };
struct Tanh { static constexpr MathFn vector = MathFn::tanh; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::tanh(a); } };
// 1 / (1 + exp(-x)): exp(-x) overflows to +inf for very negative x, and the
// result is then 0, not NaN.
struct Logistic { static constexpr MathFn vector = MathFn::logistic; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return T{1} / (T{1} + std::exp(-a)); } };
struct Erf { static constexpr MathFn vector = MathFn::erf; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::erf(a); } };
struct Sin { static constexpr MathFn vector = MathFn::sin; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::sin(a); } };
struct Cos { static constexpr MathFn vector = MathFn::cos; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::cos(a); } };
// Logical for bool, bitwise (every bit flipped) for integers, as XLA's Not.
struct Not { template <class T> static constexpr bool accepts = std::is_integral_v<T>; template <class T> T operator()(T a) const {
  if constexpr (std::is_same_v<T, bool>) return !a;
  else return static_cast<T>(~a); } };

template <class T> inline constexpr bool numeric = !std::is_same_v<T, bool>;
template <class T, class F>
T wrapping(T a, T b, F f) {
  if constexpr (wraps<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(f(static_cast<U>(a), static_cast<U>(b))));
  } else {
    return static_cast<T>(f(a, b));
  }
}
struct Add { template <class T> static constexpr bool accepts = numeric<T>; template <class T> T operator()(T a, T b) const { return wrapping(a, b, [](auto x, auto y) { return x + y; }); } };
struct Sub { template <class T> static constexpr bool accepts = numeric<T>; template <class T> T operator()(T a, T b) const { return wrapping(a, b, [](auto x, auto y) { return x - y; }); } };
struct Mul { template <class T> static constexpr bool accepts = numeric<T>; template <class T> T operator()(T a, T b) const { return wrapping(a, b, [](auto x, auto y) { return x * y; }); } };
// Integer division as XLA defines it (lax.div / lax.rem): x / 0 is -1 (all
// ones: 0xFF..FF for unsigned types), INT_MIN / -1 wraps to INT_MIN; x % 0 is
// x and INT_MIN % -1 is 0. None of them traps.
struct Div { template <class T> static constexpr bool accepts = numeric<T>; template <class T> T operator()(T a, T b) const {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return static_cast<T>(-1);
    if constexpr (wraps<T>) if (b == T(-1)) return wrap_neg(a);
    return static_cast<T>(a / b);
  } else {
    return a / b;
  } } };
struct Rem { template <class T> static constexpr bool accepts = std::is_integral_v<T> && numeric<T>; template <class T> T operator()(T a, T b) const {
  if (b == 0) return a;
  if constexpr (wraps<T>) if (b == T(-1)) return T{};
  return static_cast<T>(a % b); } };
// min and max propagate NaN from either side (as XLA does), so they commute.
struct Min { template <class T> static constexpr bool accepts = numeric<T>; template <class T> T operator()(T a, T b) const {
  if constexpr (std::is_floating_point_v<T>) if (std::isnan(b)) return b;
  return b < a ? b : a; } };
struct Max { template <class T> static constexpr bool accepts = numeric<T>; template <class T> T operator()(T a, T b) const {
  if constexpr (std::is_floating_point_v<T>) if (std::isnan(b)) return b;
  return a < b ? b : a; } };
struct Pow { static constexpr MathFn vector = MathFn::pow; template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a, T b) const { return std::pow(a, b); } };
// And, Or, Xor: logical for bool, bitwise for integers (XLA's And / Or / Xor).
struct And { template <class T> static constexpr bool accepts = std::is_integral_v<T>; template <class T> T operator()(T a, T b) const { return static_cast<T>(a & b); } };
struct Or { template <class T> static constexpr bool accepts = std::is_integral_v<T>; template <class T> T operator()(T a, T b) const { return static_cast<T>(a | b); } };
struct Xor { template <class T> static constexpr bool accepts = std::is_integral_v<T>; template <class T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); } };
// Shifts, as XLA defines them: the amount is read as unsigned, and one of the
// bit width or more shifts every bit out (0), or, for the arithmetic right
// shift, fills with the sign bit (0 or -1). The arithmetic shift reads the top
// bit as a sign for unsigned types too (XLA's ashr on the bit pattern).
template <class T> inline constexpr bool shiftable = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
constexpr bool shifted_out(T b) { return static_cast<std::make_unsigned_t<T>>(b) >= sizeof(T) * 8; }
struct ShiftLeft { template <class T> static constexpr bool accepts = shiftable<T>; template <class T> T operator()(T a, T b) const {
  using U = std::make_unsigned_t<T>;
  if (shifted_out(b)) return T{};
  return static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<U>(b))); } };
struct ShiftRightLogical { template <class T> static constexpr bool accepts = shiftable<T>; template <class T> T operator()(T a, T b) const {
  using U = std::make_unsigned_t<T>;
  if (shifted_out(b)) return T{};
  return static_cast<T>(static_cast<U>(static_cast<U>(a) >> static_cast<U>(b))); } };
struct ShiftRightArithmetic { template <class T> static constexpr bool accepts = shiftable<T>; template <class T> T operator()(T a, T b) const {
  using S = std::make_signed_t<T>;
  const S s = static_cast<S>(a);  // modulo 2^n (C++20)
  if (shifted_out(b)) return static_cast<T>(s < 0 ? S{-1} : S{0});
  return static_cast<T>(static_cast<S>(s >> static_cast<std::make_unsigned_t<T>>(b))); } };  // C++20: >> of a negative is arithmetic
struct Eq { template <class T> static constexpr bool accepts = true; template <class T> bool operator()(T a, T b) const { return a == b; } };
struct Ne { template <class T> static constexpr bool accepts = true; template <class T> bool operator()(T a, T b) const { return a != b; } };
struct Lt { template <class T> static constexpr bool accepts = numeric<T>; template <class T> bool operator()(T a, T b) const { return a < b; } };
struct Le { template <class T> static constexpr bool accepts = numeric<T>; template <class T> bool operator()(T a, T b) const { return a <= b; } };
struct Gt { template <class T> static constexpr bool accepts = numeric<T>; template <class T> bool operator()(T a, T b) const { return a > b; } };
struct Ge { template <class T> static constexpr bool accepts = numeric<T>; template <class T> bool operator()(T a, T b) const { return a >= b; } };
// clang-format on

}  // namespace refx::detail
