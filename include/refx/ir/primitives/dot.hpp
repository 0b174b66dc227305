#pragma once
// The dot primitive: the product of two matrices, (m, k) x (k, n), or
// (m, k) x (n, k)^T with the trans_b flag (`a @ b.T`, as attention scores
// are written).
//
//   dot  inputs [a, b]  attrs [result element type, transposes (bit set: prim::dot_trans_b)]
//
// The result element type is JAX's preferred_element_type. Floating results
// come from Eigen's GEMM (ir/gemm.hpp) in f32, or f64 for f64 results:
// bf16, f16, fp8 and integer operands are converted to f32 first (exactly
// for the narrow floats, whose products are then exact in f32), and narrow
// float results are rounded once from the f32 sums, as XLA does on CPU. Integer
// results are exact, wrapping modulo 2^n: each operand converted to the
// result type, products and sums wrap.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include <refx/ir/attrs.hpp>
#include <refx/ir/buffer.hpp>
#include <refx/ir/detail/convert.hpp>
#include <refx/ir/eval.hpp>
#include <refx/ir/gemm.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>
#include <refx/ir/view_access.hpp>

namespace refx::detail {

/// A dot op's attributes, read by name.
struct DotAttrs {
  DType result;
  bool trans_b;
};
inline DotAttrs dot_attrs(std::span<const std::int64_t> attrs, DType operands) {
  if (attrs.empty()) return {operands, false};
  return {static_cast<DType>(attrs[0]), (attrs[1] & prim::dot_trans_b) != 0};
}

inline void dot_abstract(AbstractContext& c) {
  const ValueType &a = c.input(0), &b = c.input(1);
  if (a.is_ref() || b.is_ref()) c.fail("dot takes values; read the Refs with load() first");
  if (a.dtype != b.dtype) c.fail("operands have different element types ({} and {})", a.dtype, b.dtype);
  if (a.dtype == DType::pred) c.fail("cannot multiply bool matrices");
  if (c.num_attrs() != 0 && c.num_attrs() != 2)
    c.fail("takes two attributes (the result element type and the transposes), or none, got {}", c.num_attrs());
  const DType result = c.num_attrs() == 0 ? a.dtype : c.dtype_attr(0);
  if (c.num_attrs() == 2 && (c.attr(1) & ~prim::dot_trans_b) != 0)
    c.fail("the transposes attribute is {}; it is a bit set of prim::dot_trans_b", c.attr(1));
  if (!prim::dot_result_fits(a.dtype, result))
    c.fail(
        "cannot give {} results for {} operands; the preferred element type must be at least as wide as the operands, "
        "and floating for floating operands",
        result, a.dtype);
  if (a.shape.rank() != 2 || b.shape.rank() != 2)
    c.fail("dot takes two matrices, got shapes {} and {}", a.shape, b.shape);
  const bool trans_b = c.num_attrs() == 2 && (c.attr(1) & prim::dot_trans_b) != 0;
  if (a.shape[1] != b.shape[trans_b ? 1 : 0])
    c.fail("contracting dimensions differ: {} x {}{}", a.shape, b.shape, trans_b ? " transposed" : "");
  ValueType t = a;
  t.dtype = result;
  t.shape = Shape{a.shape[0], trans_b ? b.shape[0] : b.shape[1]};
  c.add_output(t);
}

/// `b` as a dense array of element type `to`: `b` itself, or `scratch` filled with it.
inline const void* as_dtype(const Buffer& b, DType to, Buffer& scratch) {
  if (b.dtype() == to) return b.data();
  scratch = Buffer(to, b.shape());
  convert_buffer(b, scratch);
  return scratch.data();
}

/// Integer results: i-k-j order (the inner loop runs along rows of b and of
/// the output, and vectorises), or a dot of rows when b is transposed.
template <class R, class T>
void integer_dot(const T* a, const T* b, R* out, std::int64_t m, std::int64_t k, std::int64_t n, bool trans_b) {
  using refx::detail::wrapping_add;
  using refx::detail::wrapping_mul;
  for (std::int64_t i = 0; i < m; ++i) {
    R* row = out + i * n;
    if (trans_b) {
      for (std::int64_t j = 0; j < n; ++j) {
        R acc{};
        for (std::int64_t p = 0; p < k; ++p)
          acc = wrapping_add(acc, wrapping_mul(static_cast<R>(a[i * k + p]), static_cast<R>(b[j * k + p])));
        row[j] = acc;
      }
      continue;
    }
    std::fill_n(row, n, R{});
    for (std::int64_t p = 0; p < k; ++p) {
      const R av = static_cast<R>(a[i * k + p]);
      const T* brow = b + p * n;
      for (std::int64_t j = 0; j < n; ++j) row[j] = wrapping_add(row[j], wrapping_mul(av, static_cast<R>(brow[j])));
    }
  }
}

inline ExecStatus dot_impl(ExecContext& ctx, const Op& op) {
  const Buffer &a = ctx.in(op, 0), &b = ctx.in(op, 1);
  Buffer& out = ctx.out(op, 0);
  const DotAttrs at = dot_attrs(ctx.graph().attrs(op), a.dtype());
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = out.shape()[1];
  if (is_floating(at.result)) {
    const DType acc = at.result == DType::f64 ? DType::f64 : DType::f32;
    Buffer sa, sb, so;
    const void* pa = as_dtype(a, acc, sa);
    const void* pb = as_dtype(b, acc, sb);
    if (at.result != acc) so = Buffer(acc, out.shape());
    refx::detail::gemm(acc, pa, pb, at.result == acc ? out.data() : so.data(), m, k, n, at.trans_b);
    if (at.result != acc) convert_buffer(so, out);
    return ExecStatus::done;
  }
  visit_dtype(a.dtype(), [&](auto operand) {
    visit_dtype(at.result, [&](auto result) {
      using T = typename decltype(operand)::type;
      using R = typename decltype(result)::type;
      if constexpr (is_integer_v<T> && is_integer_v<R> && sizeof(R) >= sizeof(T))
        integer_dot(a.data<T>(), b.data<T>(), out.data<R>(), m, k, n, at.trans_b);
    });
  });
  return ExecStatus::done;
}

/// `dot`, then `[preferred=T]` when the result type is not the operands' and `[trans_b]`.
inline void dot_print(const Graph& g, const Op& op, std::string& s) {
  const DType operands = g.type(g.inputs(op)[0]).dtype;
  const DotAttrs at = dot_attrs(g.attrs(op), operands);
  std::string tags;
  if (at.result != operands) tags += fmt::format("preferred={}", at.result);
  if (at.trans_b) tags += tags.empty() ? "trans_b" : ",trans_b";
  s += tags.empty() ? std::string("dot") : fmt::format("dot[{}]", tags);
}

}  // namespace refx::detail

namespace refx::prim {

#if REFX_DEFINITIONS
// Constant-initialised (no dynamic initialisation): usable from any static
// initializer, whatever the order of translation units.
namespace defs {
inline constexpr Primitive dot = detail::as_pure(
    Primitive{"dot", detail::dot_abstract, detail::dot_impl, detail::dot_print, nullptr, ControlKind::none, nullptr});
}  // namespace defs
REFX_DECL constinit const Primitive& dot = defs::dot;
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim

// The list of built-in primitives is defined once every one of them is.
#define REFX_BUILTINS_DOT_DEFINED
#include <refx/ir/primitives/detail/builtin_list.hpp>
