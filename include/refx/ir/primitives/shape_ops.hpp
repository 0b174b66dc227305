#pragma once
// Shape primitives on Values: reshape (same elements in row-major order, new
// extents) and transpose (the axes permuted). Neither reads or writes a Ref;
// both copy.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>

namespace refx::detail {

// attrs: [rank, dims...]
inline void reshape_abstract(AbstractContext& c) {
  const ValueType& in = c.input(0);
  if (in.is_ref())
    c.fail("reshape takes a value; read the Ref with load() first (or reshape the Ref: ref.reshape<...>())");
  ValueType t = in;
  t.shape = c.shape_attrs(0);
  if (t.shape.num_elements() != in.shape.num_elements())
    c.fail("cannot reshape a {} value ({} elements) to {} ({} elements); the element count must stay the same",
           in.shape, in.shape.num_elements(), t.shape, t.shape.num_elements());
  c.add_output(t);
}
inline ExecStatus reshape_impl(ExecContext& ctx, const Op& op) {
  const Buffer& in = ctx.in(op, 0);
  Buffer& out = ctx.out(op, 0);
  std::memcpy(out.data(), in.data(), out.bytes());
  return ExecStatus::done;
}

/// The permutation of a transpose: attrs (result axis k is input axis
/// attrs[k]), or none for the reverse order (a matrix's transpose).
inline std::array<std::int64_t, max_rank> transpose_perm(std::span<const std::int64_t> attrs, std::size_t rank) {
  std::array<std::int64_t, max_rank> perm{};
  for (std::size_t k = 0; k < rank; ++k) perm[k] = attrs.empty() ? static_cast<std::int64_t>(rank - 1 - k) : attrs[k];
  return perm;
}

// attrs: none (reverse the axes), or a permutation of the axes.
inline void transpose_abstract(AbstractContext& c) {
  const ValueType& in = c.input(0);
  if (in.is_ref()) c.fail("transpose takes a value; read the Ref with load() first");
  const std::size_t rank = in.shape.rank();
  if (c.num_attrs() == 0 && rank != 2) c.fail("transpose takes a matrix (rank 2), got a {} value", in.shape);
  if (c.num_attrs() != 0 && c.num_attrs() != rank)
    c.fail("takes a permutation of the value's {} axes, got {} attributes", rank, c.num_attrs());
  std::array<bool, max_rank> used{};
  for (std::size_t k = 0; k < c.num_attrs(); ++k) {
    const std::int64_t a = c.attr(k);
    if (a < 0 || a >= static_cast<std::int64_t>(rank) || used[static_cast<std::size_t>(a)])
      c.fail("attribute {} is {}; the attributes are a permutation of 0..{}", k, a, rank - 1);
    used[static_cast<std::size_t>(a)] = true;
  }
  std::vector<std::int64_t> attrs;
  for (std::size_t k = 0; k < c.num_attrs(); ++k) attrs.push_back(c.attr(k));
  const auto perm = transpose_perm(attrs, rank);
  ValueType t = in;
  std::vector<std::int64_t> dims;
  for (std::size_t k = 0; k < rank; ++k) dims.push_back(in.shape[static_cast<std::size_t>(perm[k])]);
  t.shape = Shape(dims);
  c.add_output(t);
}
// Moves elements by their size only: bf16 and f16 move as 2-byte words.
template <class W>
void transpose_words(const void* in, void* out, std::int64_t m, std::int64_t n) {
  const W* a = static_cast<const W*>(in);
  W* o = static_cast<W*>(out);
  // 16 x 16 tiles, writing runs of the output: on a 1024 x 1024 u32 matrix
  // (-O1) this took 0.8 ms, against 7 ms writing along the input's rows and
  // 15 ms with 32 x 32 tiles, whose 32 rows 4 KiB apart alias in the cache.
  constexpr std::int64_t tile = 16;
  for (std::int64_t i0 = 0; i0 < m; i0 += tile) {
    const std::int64_t i1 = std::min(m, i0 + tile);
    for (std::int64_t j0 = 0; j0 < n; j0 += tile) {
      const std::int64_t j1 = std::min(n, j0 + tile);
      for (std::int64_t j = j0; j < j1; ++j)
        for (std::int64_t i = i0; i < i1; ++i) o[j * m + i] = a[i * n + j];
    }
  }
}
/// out = in with its axes permuted: result axis k is input axis perm[k] of
/// the input's extents dims (rank r, after merging axes that stay adjacent).
template <class W>
void permute_words(const void* in, void* out, const std::int64_t* dims, const std::int64_t* perm, std::size_t r) {
  const W* a = static_cast<const W*>(in);
  W* o = static_cast<W*>(out);
  std::array<std::int64_t, max_rank> in_stride{}, out_dims{}, stride{};
  in_stride[r - 1] = 1;
  for (std::size_t i = r - 1; i > 0; --i) in_stride[i - 1] = in_stride[i] * dims[i];
  for (std::size_t k = 0; k < r; ++k) {
    out_dims[k] = dims[perm[k]];
    stride[k] = in_stride[static_cast<std::size_t>(perm[k])];
  }
  const std::int64_t inner = out_dims[r - 1], step = stride[r - 1];
  std::int64_t outer = 1;
  for (std::size_t k = 0; k + 1 < r; ++k) outer *= out_dims[k];
  std::array<std::int64_t, max_rank> idx{};
  for (std::int64_t row = 0; row < outer; ++row, o += inner) {
    std::int64_t from = 0;
    for (std::size_t k = 0; k + 1 < r; ++k) from += idx[k] * stride[k];
    for (std::int64_t j = 0; j < inner; ++j) o[j] = a[from + j * step];
    for (std::size_t k = r - 1; k-- > 0;) {
      if (++idx[k] < out_dims[k]) break;
      idx[k] = 0;
    }
  }
}

template <class W>
void transpose_as(const void* in, void* out, const std::int64_t* dims, const std::int64_t* perm, std::size_t r) {
  if (r == 2) return transpose_words<W>(in, out, dims[0], dims[1]);
  if (r == 3 && perm[0] == 0) {  // a batch of matrices
    const std::int64_t m = dims[1], n = dims[2];
    for (std::int64_t b = 0; b < dims[0]; ++b)
      transpose_words<W>(static_cast<const W*>(in) + b * m * n, static_cast<W*>(out) + b * m * n, m, n);
    return;
  }
  permute_words<W>(in, out, dims, perm, r);
}

inline ExecStatus transpose_impl(ExecContext& ctx, const Op& op) {
  const Buffer& in = ctx.in(op, 0);
  Buffer& out = ctx.out(op, 0);
  const std::size_t rank = in.shape().rank();
  const auto perm = transpose_perm(ctx.graph().attrs(op), rank);
  // Axes that stay side by side move as one: (a, b, c) -> (c, a, b) is a
  // matrix transpose of (ab, c).
  std::array<std::int64_t, max_rank> dims{}, merged_perm{};
  std::array<std::int64_t, max_rank> first{}, size{};  // per result run: first input axis, extent
  std::size_t runs = 0;
  for (std::size_t k = 0; k < rank; ++k) {
    const std::int64_t a = perm[k];
    if (runs > 0 && a == first[runs - 1] + size[runs - 1]) {
      ++size[runs - 1];
    } else {
      first[runs] = a;
      size[runs++] = 1;
    }
  }
  // The runs in the input's order give the merged input extents.
  std::size_t placed = 0;
  for (std::int64_t a = 0; a < static_cast<std::int64_t>(rank); ++a)
    for (std::size_t r = 0; r < runs; ++r) {
      if (first[r] != a) continue;
      merged_perm[r] = static_cast<std::int64_t>(placed);
      std::int64_t extent = 1;
      for (std::int64_t i = a; i < a + size[r]; ++i) extent *= in.shape()[static_cast<std::size_t>(i)];
      dims[placed++] = extent;
    }
  if (runs <= 1) {
    std::memcpy(out.data(), in.data(), out.bytes());
    return ExecStatus::done;
  }
  switch (size_of(in.dtype())) {
    case 1: transpose_as<std::uint8_t>(in.data(), out.data(), dims.data(), merged_perm.data(), runs); break;
    case 2: transpose_as<std::uint16_t>(in.data(), out.data(), dims.data(), merged_perm.data(), runs); break;
    case 4: transpose_as<std::uint32_t>(in.data(), out.data(), dims.data(), merged_perm.data(), runs); break;
    default: transpose_as<std::uint64_t>(in.data(), out.data(), dims.data(), merged_perm.data(), runs); break;
  }
  return ExecStatus::done;
}

}  // namespace refx::detail

namespace refx::prim {

#if REFX_DEFINITIONS
// Constant-initialised (no dynamic initialisation): usable from any static
// initializer, whatever the order of translation units.
namespace defs {
inline constexpr Primitive reshape =
    detail::as_pure(Primitive{"reshape", detail::reshape_abstract, detail::reshape_impl});
inline constexpr Primitive transpose =
    detail::as_pure(Primitive{"transpose", detail::transpose_abstract, detail::transpose_impl});
}  // namespace defs
REFX_DECL constinit const Primitive& reshape = defs::reshape;
REFX_DECL constinit const Primitive& transpose = defs::transpose;
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim

// The list of built-in primitives is defined once every one of them is.
#define REFX_BUILTINS_SHAPE_OPS_DEFINED
#include <refx/ir/primitives/detail/builtin_list.hpp>
