#pragma once
// Elementwise primitives: unary math, binary arithmetic, comparisons, logic
// and bitwise ops, shifts, and select. Each provides an ElementwiseFn, so the fusion pass can chain
// them into one loop.

#include <cmath>
#include <cstring>
#include <type_traits>

#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/builtins.hpp>

namespace refx::prim {
namespace detail {

template <class F, class T>
concept accepts = F::template accepts<T>;

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

struct Neg { template <class T> static constexpr bool accepts = !std::is_same_v<T, bool>; template <class T> T operator()(T a) const { return wrap_neg(a); } };
struct Abs { template <class T> static constexpr bool accepts = !std::is_same_v<T, bool>; template <class T> T operator()(T a) const {
  if constexpr (std::is_floating_point_v<T>) return std::fabs(a);  // abs(-0.0) is +0.0
  else return a < T{} ? wrap_neg(a) : a; } };
struct Exp { template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::exp(a); } };
struct Log { template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::log(a); } };
struct Sqrt { template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::sqrt(a); } };
struct Rsqrt { template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return T{1} / std::sqrt(a); } };
struct Tanh { template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return std::tanh(a); } };
// 1 / (1 + exp(-x)): exp(-x) overflows to +inf for very negative x, and the
// result is then 0, not NaN.
struct Logistic { template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a) const { return T{1} / (T{1} + std::exp(-a)); } };
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
struct Pow { template <class T> static constexpr bool accepts = std::is_floating_point_v<T>; template <class T> T operator()(T a, T b) const { return std::pow(a, b); } };
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

// Every functor sees compute_t<T>: bf16 and f16 elements are computed in
// f32 and the result is rounded (to nearest even) when stored, as XLA does.
template <class F>
void unary_kernel(DType t, const void* const* ins, void* out, std::int64_t n) {
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (F::template accepts<C>) {
      const T* a = static_cast<const T*>(ins[0]);
      T* o = static_cast<T*>(out);
      for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(F{}(static_cast<C>(a[i])));
    }
  });
}

template <class F>
void binary_kernel(DType t, const void* const* ins, void* out, std::int64_t n) {
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (F::template accepts<C>) {
      using R = std::conditional_t<std::is_same_v<decltype(F{}(C{}, C{})), bool>, bool, T>;  // comparisons give bool
      const T* a = static_cast<const T*>(ins[0]);
      const T* b = static_cast<const T*>(ins[1]);
      R* o = static_cast<R*>(out);
      for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(F{}(static_cast<C>(a[i]), static_cast<C>(b[i])));
    }
  });
}

inline void select_kernel(DType t, const void* const* ins, void* out, std::int64_t n) {
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* c = static_cast<const bool*>(ins[0]);
    const T* a = static_cast<const T*>(ins[1]);
    const T* b = static_cast<const T*>(ins[2]);
    T* o = static_cast<T*>(out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : b[i];
  });
}

template <class F>
bool accepts_dtype(DType t) {
  return visit_dtype(t, [](auto tag) { return F::template accepts<compute_t<typename decltype(tag)::type>>; });
}

inline void expect_arrays(AbstractContext& c) {
  for (std::size_t i = 0; i < c.num_inputs(); ++i)
    if (c.input(i).is_ref()) c.fail("operand {} is a Ref; read it with load() first", i);
}

template <class F>
void unary_abstract(AbstractContext& c) {
  expect_arrays(c);
  if (!accepts_dtype<F>(c.input(0).dtype)) c.fail("does not accept {} operands", c.input(0).dtype);
  c.add_output(c.input(0));
}

template <class F, bool Predicate>
void binary_abstract(AbstractContext& c) {
  expect_arrays(c);
  const ValueType &a = c.input(0), &b = c.input(1);
  if (a.dtype != b.dtype) c.fail("operands have different element types ({} and {}); cast one first", a.dtype, b.dtype);
  if (!(a.shape == b.shape)) c.fail("operands have different shapes ({} and {})", a.shape, b.shape);
  if (!accepts_dtype<F>(a.dtype)) c.fail("does not accept {} operands", a.dtype);
  ValueType out = a;
  if (Predicate) out.dtype = DType::pred;
  c.add_output(out);
}

inline void select_abstract(AbstractContext& c) {
  expect_arrays(c);
  const ValueType &p = c.input(0), &a = c.input(1), &b = c.input(2);
  if (p.dtype != DType::pred) c.fail("the condition must be bool, not {}", p.dtype);
  if (a.dtype != b.dtype) c.fail("branches have different element types ({} and {})", a.dtype, b.dtype);
  if (!(p.shape == a.shape) || !(a.shape == b.shape)) c.fail("shapes differ ({}, {}, {})", p.shape, a.shape, b.shape);
  c.add_output(a);
}

}  // namespace detail

/// Shared implementation of every elementwise primitive.
inline ExecStatus elementwise_impl(ExecContext& ctx, const Op& op) {
  const auto ins = ctx.graph().inputs(op);
  const void* ptrs[4];
  for (std::size_t i = 0; i < ins.size(); ++i) ptrs[i] = ctx.in(op, i).data();
  Buffer& out = ctx.out(op, 0);
  const DType t = ctx.in(op, ins.size() == 3 ? 1 : 0).dtype();
  op.prim->elementwise(t, ptrs, out.data(), out.size());
  return ExecStatus::done;
}

template <class F>
Primitive unary(std::string_view name) {
  return Primitive{name, &detail::unary_abstract<F>, &elementwise_impl, nullptr, nullptr, ControlKind::none,
                   &detail::unary_kernel<F>};
}
template <class F, bool Predicate = false>
Primitive binary(std::string_view name) {
  return Primitive{name, &detail::binary_abstract<F, Predicate>, &elementwise_impl, nullptr, nullptr, ControlKind::none,
                   &detail::binary_kernel<F>};
}

#if REFX_DEFINITIONS
REFX_DECL const Primitive& neg = define_primitive(unary<detail::Neg>("neg"));
REFX_DECL const Primitive& abs = define_primitive(unary<detail::Abs>("abs"));
REFX_DECL const Primitive& exp = define_primitive(unary<detail::Exp>("exp"));
REFX_DECL const Primitive& log = define_primitive(unary<detail::Log>("log"));
REFX_DECL const Primitive& sqrt = define_primitive(unary<detail::Sqrt>("sqrt"));
REFX_DECL const Primitive& logical_not = define_primitive(unary<detail::Not>("not"));
REFX_DECL const Primitive& rsqrt = define_primitive(unary<detail::Rsqrt>("rsqrt"));
REFX_DECL const Primitive& tanh = define_primitive(unary<detail::Tanh>("tanh"));
REFX_DECL const Primitive& logistic = define_primitive(unary<detail::Logistic>("logistic"));
REFX_DECL const Primitive& add = define_primitive(binary<detail::Add>("add"));
REFX_DECL const Primitive& sub = define_primitive(binary<detail::Sub>("sub"));
REFX_DECL const Primitive& mul = define_primitive(binary<detail::Mul>("mul"));
REFX_DECL const Primitive& div = define_primitive(binary<detail::Div>("div"));
REFX_DECL const Primitive& rem = define_primitive(binary<detail::Rem>("rem"));
REFX_DECL const Primitive& min = define_primitive(binary<detail::Min>("min"));
REFX_DECL const Primitive& max = define_primitive(binary<detail::Max>("max"));
REFX_DECL const Primitive& logical_and = define_primitive(binary<detail::And>("and"));
REFX_DECL const Primitive& logical_or = define_primitive(binary<detail::Or>("or"));
REFX_DECL const Primitive& logical_xor = define_primitive(binary<detail::Xor>("xor"));
REFX_DECL const Primitive& pow = define_primitive(binary<detail::Pow>("pow"));
REFX_DECL const Primitive& shift_left = define_primitive(binary<detail::ShiftLeft>("shift_left"));
REFX_DECL const Primitive& shift_right_logical = define_primitive(binary<detail::ShiftRightLogical>("shift_right_logical"));
REFX_DECL const Primitive& shift_right_arithmetic = define_primitive(binary<detail::ShiftRightArithmetic>("shift_right_arithmetic"));
REFX_DECL const Primitive& eq = define_primitive(binary<detail::Eq, true>("eq"));
REFX_DECL const Primitive& ne = define_primitive(binary<detail::Ne, true>("ne"));
REFX_DECL const Primitive& lt = define_primitive(binary<detail::Lt, true>("lt"));
REFX_DECL const Primitive& le = define_primitive(binary<detail::Le, true>("le"));
REFX_DECL const Primitive& gt = define_primitive(binary<detail::Gt, true>("gt"));
REFX_DECL const Primitive& ge = define_primitive(binary<detail::Ge, true>("ge"));
REFX_DECL const Primitive& select = define_primitive(Primitive{"select", &detail::select_abstract, &elementwise_impl,
                                                            nullptr, nullptr, ControlKind::none, &detail::select_kernel});
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim
