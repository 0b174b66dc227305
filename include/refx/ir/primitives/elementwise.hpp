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
#include <refx/ir/primitives/elementwise_fns.hpp>

namespace refx::prim {
namespace detail {

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
  const void* ptrs[8];  // map takes up to 8 operands
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
