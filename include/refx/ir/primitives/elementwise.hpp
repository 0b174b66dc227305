#pragma once
// Elementwise primitives: unary math, binary arithmetic, comparisons, logic
// and bitwise ops, shifts, and select. Each provides an ElementwiseFn, so the fusion pass can chain
// them into one loop.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>
#include <refx/ir/primitives/detail/elementwise_fns.hpp>

namespace refx::detail {

// Every functor sees compute_t<T>: bf16 and f16 elements are computed in
// f32 and the result is rounded (to nearest even) when stored, as XLA does.
template <class F>
void unary_kernel(DType t, const void* const* ins, void* out, std::int64_t count) {
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (F::template accepts<C>) {
      const T* a = static_cast<const T*>(ins[0]);
      T* o = static_cast<T*>(out);
      const std::int64_t n = count;  // a local: a store through o (an i64) may alias the captured count
      for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(F{}(static_cast<C>(a[i])));
    }
  });
}

template <class F>
void binary_kernel(DType t, const void* const* ins, void* out, std::int64_t count) {
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (F::template accepts<C>) {
      using R = std::conditional_t<std::is_same_v<decltype(F{}(C{}, C{})), bool>, bool, T>;  // comparisons give bool
      const T* a = static_cast<const T*>(ins[0]);
      const T* b = static_cast<const T*>(ins[1]);
      R* o = static_cast<R*>(out);
      const std::int64_t n = count;  // as in unary_kernel
      for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(F{}(static_cast<C>(a[i]), static_cast<C>(b[i])));
    }
  });
}

// Picks the bits of a or b through a mask made from the condition: a loop
// the compiler vectorises (`c[i] ? a[i] : b[i]` did not: 0.6-0.8 ns an f32
// element against 0.11 with AVX-512, 0.19 with SSE2).
inline void select_kernel(DType t, const void* const* ins, void* out, std::int64_t count) {
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using U = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                                 std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                                    std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
    static_assert(sizeof(U) == sizeof(T));
    const auto* c = static_cast<const std::uint8_t*>(ins[0]);  // bools
    const auto* a = static_cast<const std::byte*>(ins[1]);
    const auto* b = static_cast<const std::byte*>(ins[2]);
    auto* o = static_cast<std::byte*>(out);
    const std::int64_t n = count;  // a local: byte stores through o may alias the captured count
    for (std::int64_t i = 0; i < n; ++i) {
      U x, y;
      std::memcpy(&x, a + i * sizeof(U), sizeof(U));
      std::memcpy(&y, b + i * sizeof(U), sizeof(U));
      const auto m = static_cast<U>(U{0} - static_cast<U>(c[i] != 0));
      const auto r = static_cast<U>((x & m) | (y & static_cast<U>(~m)));
      std::memcpy(o + i * sizeof(U), &r, sizeof(U));
    }
  });
}

/// The element function of a vectorised math op (F::vector, ir/vector_math.hpp):
/// f32 directly; bf16 and f16 converted to f32 a chunk at a time, computed
/// and rounded back; f64 with F's scalar function.
template <class F>
void math_kernel(DType t, const void* const* ins, void* out, std::int64_t n) {
  constexpr bool binary = std::is_invocable_v<F, double, double>;
  if (t == DType::f32) {
    const auto* a = static_cast<const float*>(ins[0]);
    vector_math_f32(F::vector, a, binary ? static_cast<const float*>(ins[1]) : a, static_cast<float*>(out), n);
    return;
  }
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>) {
      const auto* a = static_cast<const double*>(ins[0]);
      const auto* b = static_cast<const double*>(ins[binary ? 1 : 0]);
      auto* o = static_cast<double*>(out);
      for (std::int64_t i = 0; i < n; ++i) {
        if constexpr (binary) o[i] = F{}(a[i], b[i]);
        else o[i] = F{}(a[i]);
      }
    } else if constexpr (std::is_same_v<compute_t<T>, float> && !std::is_same_v<T, float>) {
      constexpr std::int64_t chunk = 256;
      float fa[chunk], fb[chunk];
      const T* a = static_cast<const T*>(ins[0]);
      const T* b = static_cast<const T*>(ins[binary ? 1 : 0]);
      T* o = static_cast<T*>(out);
      for (std::int64_t c = 0; c < n; c += chunk) {
        const std::int64_t m = std::min(chunk, n - c);
        for (std::int64_t i = 0; i < m; ++i) fa[i] = static_cast<float>(a[c + i]);
        if constexpr (binary)
          for (std::int64_t i = 0; i < m; ++i) fb[i] = static_cast<float>(b[c + i]);
        vector_math_f32(F::vector, fa, binary ? fb : fa, fa, m);
        for (std::int64_t i = 0; i < m; ++i) o[c + i] = static_cast<T>(fa[i]);
      }
    }
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

}  // namespace refx::detail

namespace refx::prim {

/// Shared implementation of every elementwise primitive.
inline ExecStatus elementwise_impl(ExecContext& ctx, const Op& op) {
  const auto ins = ctx.graph().inputs(op);
  const void* ptrs[8];  // map takes up to 8 operands
  for (std::size_t i = 0; i < ins.size(); ++i) ptrs[i] = ctx.in(op, i).data();
  Buffer& out = ctx.out(op, 0);
  const DType t = ctx.in(op, ins.size() == 3 ? 1 : 0).dtype();
  op.prim->elementwise(t, ptrs, out.data(), out.size());
  return ExecStatus::done;
}

template <class F>
constexpr Primitive unary(std::string_view name) {
  return detail::as_pure(Primitive{name, &detail::unary_abstract<F>, &elementwise_impl, nullptr, nullptr,
                                   ControlKind::none, &detail::unary_kernel<F>});
}
/// A unary or binary (pow) math op, vectorised on f32 (math_kernel).
template <class F>
constexpr Primitive math(std::string_view name) {
  if constexpr (std::is_invocable_v<F, double, double>)
    return detail::as_pure(Primitive{name, &detail::binary_abstract<F, false>, &elementwise_impl, nullptr, nullptr,
                                     ControlKind::none, &detail::math_kernel<F>});
  else
    return detail::as_pure(Primitive{name, &detail::unary_abstract<F>, &elementwise_impl, nullptr, nullptr,
                                     ControlKind::none, &detail::math_kernel<F>});
}
template <class F, bool Predicate = false>
constexpr Primitive binary(std::string_view name) {
  return detail::as_pure(Primitive{name, &detail::binary_abstract<F, Predicate>, &elementwise_impl, nullptr, nullptr,
                                   ControlKind::none, &detail::binary_kernel<F>});
}

#if REFX_DEFINITIONS
// Constant-initialised (no dynamic initialisation): usable from any static
// initializer, whatever the order of translation units.
namespace defs {
inline constexpr Primitive neg = unary<detail::Neg>("neg");
inline constexpr Primitive abs = unary<detail::Abs>("abs");
inline constexpr Primitive exp = math<detail::Exp>("exp");
inline constexpr Primitive log = math<detail::Log>("log");
inline constexpr Primitive sqrt = math<detail::Sqrt>("sqrt");
inline constexpr Primitive logical_not = unary<detail::Not>("not");
inline constexpr Primitive rsqrt = math<detail::Rsqrt>("rsqrt");
inline constexpr Primitive tanh = math<detail::Tanh>("tanh");
inline constexpr Primitive logistic = math<detail::Logistic>("logistic");
inline constexpr Primitive log1p = math<detail::Log1p>("log1p");
inline constexpr Primitive expm1 = math<detail::Expm1>("expm1");
inline constexpr Primitive erf = math<detail::Erf>("erf");
inline constexpr Primitive sin = math<detail::Sin>("sin");
inline constexpr Primitive cos = math<detail::Cos>("cos");
inline constexpr Primitive add = binary<detail::Add>("add");
inline constexpr Primitive sub = binary<detail::Sub>("sub");
inline constexpr Primitive mul = binary<detail::Mul>("mul");
inline constexpr Primitive div = binary<detail::Div>("div");
inline constexpr Primitive rem = binary<detail::Rem>("rem");
inline constexpr Primitive min = binary<detail::Min>("min");
inline constexpr Primitive max = binary<detail::Max>("max");
inline constexpr Primitive logical_and = binary<detail::And>("and");
inline constexpr Primitive logical_or = binary<detail::Or>("or");
inline constexpr Primitive logical_xor = binary<detail::Xor>("xor");
inline constexpr Primitive pow = math<detail::Pow>("pow");
inline constexpr Primitive shift_left = binary<detail::ShiftLeft>("shift_left");
inline constexpr Primitive shift_right_logical = binary<detail::ShiftRightLogical>("shift_right_logical");
inline constexpr Primitive shift_right_arithmetic = binary<detail::ShiftRightArithmetic>("shift_right_arithmetic");
inline constexpr Primitive eq = binary<detail::Eq, true>("eq");
inline constexpr Primitive ne = binary<detail::Ne, true>("ne");
inline constexpr Primitive lt = binary<detail::Lt, true>("lt");
inline constexpr Primitive le = binary<detail::Le, true>("le");
inline constexpr Primitive gt = binary<detail::Gt, true>("gt");
inline constexpr Primitive ge = binary<detail::Ge, true>("ge");
inline constexpr Primitive select =
    detail::as_pure(Primitive{"select", &detail::select_abstract, &elementwise_impl, nullptr, nullptr,
                              ControlKind::none, &detail::select_kernel});
}  // namespace defs
REFX_DECL constinit const Primitive& neg = defs::neg;
REFX_DECL constinit const Primitive& abs = defs::abs;
REFX_DECL constinit const Primitive& exp = defs::exp;
REFX_DECL constinit const Primitive& log = defs::log;
REFX_DECL constinit const Primitive& sqrt = defs::sqrt;
REFX_DECL constinit const Primitive& logical_not = defs::logical_not;
REFX_DECL constinit const Primitive& rsqrt = defs::rsqrt;
REFX_DECL constinit const Primitive& tanh = defs::tanh;
REFX_DECL constinit const Primitive& logistic = defs::logistic;
REFX_DECL constinit const Primitive& log1p = defs::log1p;
REFX_DECL constinit const Primitive& expm1 = defs::expm1;
REFX_DECL constinit const Primitive& erf = defs::erf;
REFX_DECL constinit const Primitive& sin = defs::sin;
REFX_DECL constinit const Primitive& cos = defs::cos;
REFX_DECL constinit const Primitive& add = defs::add;
REFX_DECL constinit const Primitive& sub = defs::sub;
REFX_DECL constinit const Primitive& mul = defs::mul;
REFX_DECL constinit const Primitive& div = defs::div;
REFX_DECL constinit const Primitive& rem = defs::rem;
REFX_DECL constinit const Primitive& min = defs::min;
REFX_DECL constinit const Primitive& max = defs::max;
REFX_DECL constinit const Primitive& logical_and = defs::logical_and;
REFX_DECL constinit const Primitive& logical_or = defs::logical_or;
REFX_DECL constinit const Primitive& logical_xor = defs::logical_xor;
REFX_DECL constinit const Primitive& pow = defs::pow;
REFX_DECL constinit const Primitive& shift_left = defs::shift_left;
REFX_DECL constinit const Primitive& shift_right_logical = defs::shift_right_logical;
REFX_DECL constinit const Primitive& shift_right_arithmetic = defs::shift_right_arithmetic;
REFX_DECL constinit const Primitive& eq = defs::eq;
REFX_DECL constinit const Primitive& ne = defs::ne;
REFX_DECL constinit const Primitive& lt = defs::lt;
REFX_DECL constinit const Primitive& le = defs::le;
REFX_DECL constinit const Primitive& gt = defs::gt;
REFX_DECL constinit const Primitive& ge = defs::ge;
REFX_DECL constinit const Primitive& select = defs::select;
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim

// The list of built-in primitives is defined once every one of them is.
#define REFX_BUILTINS_ELEMENTWISE_DEFINED
#include <refx/ir/primitives/detail/builtin_list.hpp>
