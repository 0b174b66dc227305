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
#include <memory>
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

/// Per-thread f32 scratch for the widened panels of bf16 dots: reused from
/// call to call (no allocation nor page faults in steady state), kept up to
/// `kept_floats` (16 MiB); a larger need is met for the call alone.
class WidenScratch {
 public:
  static constexpr std::int64_t kept_floats = std::int64_t{1} << 22;
  float* get(std::int64_t floats) {
    if (floats <= size_) return data_.get();
    // Not zero-filled: every element used is written by the widening first.
    data_.reset(new float[static_cast<std::size_t>(floats)]);
    size_ = floats;
    return data_.get();
  }
  /// Drops a buffer above what is kept, after the call that needed it.
  void trim() {
    if (size_ > kept_floats) data_.reset(), size_ = 0;
  }
  static WidenScratch& of_this_thread() {
    thread_local WidenScratch s;
    return s;
  }

 private:
  std::unique_ptr<float[]> data_;
  std::int64_t size_ = 0;
};

/// Columns [p0, p0 + kc) of the rows x cols bf16 matrix `src`, widened into
/// the dense rows x kc f32 matrix `dst`.
inline void widen_columns(const bf16* src, float* dst, std::int64_t rows, std::int64_t cols, std::int64_t p0,
                          std::int64_t kc) {
  for (std::int64_t r = 0; r < rows; ++r) widen_bf16(src + r * cols + p0, dst + r * kc, kc);
}

/// How many contraction indices a bf16 dot widens at a time: both panels
/// (m x 256 and 256 x n f32) stay in L2 for the sizes Pallas blocks have
/// (128-512), so the GEMM packs hot data, and Eigen blocks k by about this
/// much itself, so the panels add no passes over `out`.
inline constexpr std::int64_t bf16_dot_panel = 256;

/// out (m x n f32) = a (m x k) times b (k x n, or n x k with `trans_b`), bf16
/// operands: each operand's panel of `bf16_dot_panel` contraction indices
/// widened exactly to f32 into per-thread scratch, the f32 GEMM of the
/// panels accumulating into `out`. Sums are f32 of the exact products, as
/// for the whole operands widened at once (the order of the f32 additions
/// across panels is the GEMM's own k-blocking order).
/// `panel_size` is there for bench/matmul.cpp to compare panel sizes.
inline void bf16_dot(const bf16* a, const bf16* b, float* out, std::int64_t m, std::int64_t k, std::int64_t n,
                     bool trans_b, bool accumulate = false, std::int64_t panel_size = bf16_dot_panel) {
  if (k == 0) {
    refx::detail::gemm(DType::f32, nullptr, nullptr, out, m, 0, n, trans_b, accumulate);
    return;
  }
  const std::int64_t panel = std::min(k, panel_size);
  WidenScratch& scratch = WidenScratch::of_this_thread();
  float* wa = scratch.get((m + n) * panel);
  float* wb = wa + m * panel;
  for (std::int64_t p0 = 0; p0 < k; p0 += panel) {
    const std::int64_t kc = std::min(panel, k - p0);
    if (kc == k) widen_bf16(a, wa, m * k);
    else widen_columns(a, wa, m, k, p0, kc);
    if (trans_b) {
      if (kc == k) widen_bf16(b, wb, n * k);
      else widen_columns(b, wb, n, k, p0, kc);
    } else {
      widen_bf16(b + p0 * n, wb, kc * n);  // rows [p0, p0 + kc): contiguous
    }
    refx::detail::gemm(DType::f32, wa, wb, out, m, kc, n, trans_b, accumulate || p0 > 0);
  }
  scratch.trim();
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

/// The product of `a` and `b` into `out`, a dense m x n array of `at.result`;
/// with `accumulate` (f32 and f64 results only), added to what `out` holds.
inline void dot_into(const Buffer& a, const Buffer& b, const DotAttrs& at, std::byte* out, std::int64_t m,
                     std::int64_t k, std::int64_t n, bool accumulate = false) {
  if (is_floating(at.result)) {
    const DType acc = at.result == DType::f64 ? DType::f64 : DType::f32;
    Buffer sa, sb, so;
    if (at.result != acc) so = Buffer(acc, Shape{m, n});
    void* sums = at.result == acc ? static_cast<void*>(out) : so.data();
    if (a.dtype() == DType::bf16 && acc == DType::f32) {
      bf16_dot(a.data<bf16>(), b.data<bf16>(), static_cast<float*>(sums), m, k, n, at.trans_b, accumulate);
    } else {
      const void* pa = as_dtype(a, acc, sa);
      const void* pb = as_dtype(b, acc, sb);
      refx::detail::gemm(acc, pa, pb, sums, m, k, n, at.trans_b, accumulate);
    }
    if (at.result != acc) convert_run(acc, so.data(), at.result, out, m * n);
    return;
  }
  visit_dtype(a.dtype(), [&](auto operand) {
    visit_dtype(at.result, [&](auto result) {
      using T = typename decltype(operand)::type;
      using R = typename decltype(result)::type;
      if constexpr (is_integer_v<T> && is_integer_v<R> && sizeof(R) >= sizeof(T))
        integer_dot(a.data<T>(), b.data<T>(), reinterpret_cast<R*>(out), m, k, n, at.trans_b);
    });
  });
}

/// Whether dot_into(..., accumulate = true) adds each element's whole sum to
/// `out` once, as a separate dot and accumulation would: the GEMM does not
/// split the depth (gemm_adds_whole_sums), nor do bf16 panels.
inline bool dot_adds_whole_sums(DType operands, DType result, std::int64_t k) {
  if (result != DType::f32 && result != DType::f64) return false;
  if (operands == DType::bf16 && result == DType::f32 && k > bf16_dot_panel) return false;
  return refx::detail::gemm_adds_whole_sums(result, k);
}

// A dot either gives its result as a value, or (made by the fusion pass,
// passes/fuse.hpp) stores it into, or accumulates it into, the region of its
// one view. A dense region is written by the GEMM itself; an accumulation
// only where the GEMM adds whole sums (results bit-identical to a separate
// dot and accum); otherwise through a result buffer.
inline ExecStatus dot_impl(ExecContext& ctx, const Op& op) {
  const Buffer &a = ctx.in(op, 0), &b = ctx.in(op, 1);
  const DotAttrs at = dot_attrs(ctx.graph().attrs(op), a.dtype());
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = at.trans_b ? b.shape()[0] : b.shape()[1];
  if (op.view_count == 0) {
    dot_into(a, b, at, ctx.out(op, 0).data(), m, k, n);
    return ExecStatus::done;
  }
  const ResolvedView dst = ctx.view(op, 0);
  const bool accumulate = (ctx.graph().effects(op)[0].bits & effect_accum) != 0;
  if (is_contiguous(dst) && (!accumulate || dot_adds_whole_sums(a.dtype(), at.result, k))) {
    dot_into(a, b, at, dst.buffer->data() + dst.offset * static_cast<std::int64_t>(size_of(at.result)), m, k, n,
             accumulate);
    return ExecStatus::done;
  }
  Buffer result(at.result, Shape{m, n});
  dot_into(a, b, at, result.data(), m, k, n);
  if (accumulate) accum_view(dst, result);
  else write_view(dst, result);
  return ExecStatus::done;
}

/// `dot`, then `[preferred=T]` when the result type is not the operands' and `[trans_b]`.
inline void dot_print(const Graph& g, const Op& op, std::string& s) {
  const DType operands = g.type(g.inputs(op)[0]).dtype;
  const DotAttrs at = dot_attrs(g.attrs(op), operands);
  std::string tags;
  if (at.result != operands) tags += fmt::format("preferred={}", at.result);
  if (at.trans_b) tags += tags.empty() ? "trans_b" : ",trans_b";
  if (op.view_count != 0) {  // fused with its store or accumulation
    const bool accum = (g.effects(op)[0].bits & effect_accum) != 0;
    tags += tags.empty() ? "" : ",";
    tags += accum ? "accum" : "store";
  }
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
