#pragma once
// Reading, writing and accumulating through a resolved (strided) view.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include <refx/core/error.hpp>
#include <refx/ir/attrs.hpp>
#include <refx/ir/buffer.hpp>

namespace refx {

/// A view with its dynamic starts resolved: element offset into the Ref and,
/// per kept dimension, the extent and stride (in elements).
struct ResolvedView {
  Buffer* buffer = nullptr;
  std::int64_t offset = 0;
  Shape shape;
  std::array<std::int64_t, max_rank> strides{};

  std::int64_t elements() const noexcept { return shape.num_elements(); }
  std::size_t bytes() const noexcept { return static_cast<std::size_t>(elements()) * size_of(buffer->dtype()); }
};

/// Whether extents `shape` with element strides `strides` are one dense,
/// row-major run of elements (extents of 1 may have any stride).
inline bool is_dense_run(std::span<const std::int64_t> shape, const std::int64_t* strides) noexcept {
  std::int64_t run = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != run) return false;
    run *= shape[d];
  }
  return true;
}
/// True when a view is one dense, row-major run of elements.
inline bool is_contiguous(const ResolvedView& v) noexcept { return is_dense_run(v.shape.dims(), v.strides.data()); }

/// The last index a window of `size` elements from `start`, `stride` apart,
/// covers (the start itself when the window is empty).
constexpr std::int64_t window_last(std::int64_t start, std::int64_t size, std::int64_t stride) noexcept {
  return start + (size > 0 ? (size - 1) * stride : 0);
}
/// Whether that window lies in a dimension of `extent` elements (an empty
/// window may start at `extent`).
constexpr bool window_fits(std::int64_t start, std::int64_t size, std::int64_t stride, std::int64_t extent) noexcept {
  return start >= 0 && (size > 0 ? window_last(start, size, stride) < extent : start <= extent);
}
/// What is wrong with an index whose window does not fit dimension `dim`.
inline std::string out_of_bounds_text(std::int64_t start, std::int64_t size, std::int64_t stride, std::size_t dim,
                                      std::int64_t extent) {
  return fmt::format("index {} (covering {}..{}) is out of bounds for dimension {} of size {}", start, start,
                     window_last(start, size, stride), dim, extent);
}
/// The run-time error of a traced index whose window does not fit.
inline RuntimeError index_out_of_bounds(std::int64_t start, std::int64_t size, std::int64_t stride, std::size_t dim,
                                        std::int64_t extent, SourceLoc loc) {
  return runtime_error_at(loc, "{}", out_of_bounds_text(start, size, stride, dim, extent));
}

namespace detail {
/// a + b and a * b, wrapping around (two's complement) for signed integers
/// instead of overflowing (undefined behaviour), as XLA defines them. bf16,
/// f16 and fp8 compute in f32 and round once (their operators): a combining
/// copy into a narrow float rounds once per element per arriving block.
template <class T>
T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return static_cast<T>(a + b);
  }
}
template <class T>
T wrapping_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return static_cast<T>(a * b);
  }
}

/// Calls row(ref_offset, dense_offset, n, stride) for every innermost row.
template <class Row>
void for_each_row(const ResolvedView& v, Row&& row) {
  const std::size_t r = v.shape.rank();
  if (r == 0) {
    row(v.offset, std::int64_t{0}, std::int64_t{1}, std::int64_t{1});
    return;
  }
  const std::int64_t inner = v.shape[r - 1];
  const std::int64_t total = v.shape.num_elements();
  if (total == 0) return;
  std::array<std::int64_t, max_rank> idx{};
  for (std::int64_t dense = 0; dense < total; dense += inner) {
    std::int64_t off = v.offset;
    for (std::size_t d = 0; d + 1 < r; ++d) off += idx[d] * v.strides[d];
    row(off, dense, inner, v.strides[r - 1]);
    for (std::size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < v.shape[d]) break;
      idx[d] = 0;
    }
  }
}

/// Calls f(offset, dense offset from b, count, stride) for the runs of the
/// dense (row-major) elements [b, b + m) of `shape`, each run along the
/// innermost dimension, where element strides `strides` from `offset` say
/// where each element is.
template <class F>
void for_each_run(std::int64_t offset, const Shape& shape, const std::int64_t* strides, std::int64_t b, std::int64_t m,
                  F&& f) {
  const std::size_t r = shape.rank();
  if (r == 0) {
    if (m > 0) f(offset, std::int64_t{0}, std::int64_t{1}, std::int64_t{1});
    return;
  }
  const std::int64_t inner = shape[r - 1];
  for (std::int64_t i = b; i < b + m;) {
    std::int64_t row = i / inner;
    const std::int64_t col = i % inner;
    std::int64_t off = offset;
    for (std::size_t d = r - 1; d-- > 0;) {
      off += (row % shape[d]) * strides[d];
      row /= shape[d];
    }
    const std::int64_t cnt = std::min(inner - col, b + m - i);
    f(off + col * strides[r - 1], i - b, cnt, strides[r - 1]);
    i += cnt;
  }
}
template <class F>
void for_each_run(const ResolvedView& v, std::int64_t b, std::int64_t m, F&& f) {
  for_each_run(v.offset, v.shape, v.strides.data(), b, m, std::forward<F>(f));
}

template <class W>
void fill_words(std::byte* dst, const std::byte* word, std::int64_t n) {
  W w;
  std::memcpy(&w, word, sizeof(W));
  std::fill_n(reinterpret_cast<W*>(dst), n, w);
}

/// Copies `n` elements of `es` bytes from `src`, `stride` elements apart
/// (0: one element, repeated), to the dense `dst`.
inline void copy_run(const std::byte* src, std::int64_t stride, std::int64_t n, std::size_t es, std::byte* dst) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * es);
  } else if (stride == 0) {
    switch (es) {
      case 1: std::memset(dst, static_cast<int>(*src), static_cast<std::size_t>(n)); break;
      case 2: fill_words<std::uint16_t>(dst, src, n); break;
      case 4: fill_words<std::uint32_t>(dst, src, n); break;
      default: fill_words<std::uint64_t>(dst, src, n); break;
    }
  } else {
    for (std::int64_t i = 0; i < n; ++i)
      std::memcpy(dst + static_cast<std::size_t>(i) * es, src + i * stride * static_cast<std::int64_t>(es), es);
  }
}
}  // namespace detail

/// The element strides that read a dense, row-major array of shape `in` as
/// an array of shape `out` (lax.broadcast_in_dim with the dimensions kept in
/// order): 0 along every dimension where `in` has extent 1 (stretched) and
/// everywhere for a scalar `in`. `in` has rank 0 or out's rank.
inline std::array<std::int64_t, max_rank> broadcast_strides(const Shape& in, const Shape& out) noexcept {
  std::array<std::int64_t, max_rank> s{};
  if (in.rank() == 0) return s;
  const auto dense = in.strides();
  for (std::size_t d = 0; d < out.rank(); ++d) s[d] = in[d] == 1 ? 0 : dense[d];
  return s;
}

/// The period of the dense elements of `in` read as `out` (broadcast_strides):
/// element i of `out` reads what element i mod P does, P the product of the
/// extents after the leading stretched dimensions (a <1, N> row: N).
inline std::int64_t broadcast_period(const Shape& in, const Shape& out) noexcept {
  std::int64_t p = out.num_elements();
  if (in.rank() == 0 || p == 0) return 1;
  for (std::size_t d = 0; d < out.rank() && in[d] == 1; ++d) p /= out[d];
  return p;
}

/// Writes the dense elements [b, b + m) of the array `in` (shape `in_shape`,
/// elements of `es` bytes) broadcast to `out_shape`, into `dst`.
inline void read_broadcast(const std::byte* in, const Shape& in_shape, const Shape& out_shape, std::size_t es,
                           std::int64_t b, std::int64_t m, std::byte* dst) {
  const auto strides = broadcast_strides(in_shape, out_shape);
  const auto e = static_cast<std::int64_t>(es);
  detail::for_each_run(0, out_shape, strides.data(), b, m,
                       [&](std::int64_t off, std::int64_t at, std::int64_t n, std::int64_t stride) {
                         detail::copy_run(in + off * e, stride, n, es, dst + at * e);
                       });
}

/// Copies the view's region into the dense buffer `out` (same dtype, view shape).
inline void read_view(const ResolvedView& v, Buffer& out) {
  const std::size_t es = size_of(out.dtype());
  const std::byte* src = v.buffer->data();
  std::byte* dst = out.data();
  detail::for_each_row(v, [&](std::int64_t off, std::int64_t dense, std::int64_t n, std::int64_t stride) {
    if (stride == 1) {
      std::memcpy(dst + dense * es, src + off * es, static_cast<std::size_t>(n) * es);
    } else {
      for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + (dense + i) * es, src + (off + i * stride) * es, es);
    }
  });
}

/// Stores the dense buffer `in` into the view's region.
inline void write_view(const ResolvedView& v, const Buffer& in) {
  const std::size_t es = size_of(in.dtype());
  std::byte* dst = v.buffer->data();
  const std::byte* src = in.data();
  detail::for_each_row(v, [&](std::int64_t off, std::int64_t dense, std::int64_t n, std::int64_t stride) {
    if (stride == 1) {
      std::memmove(dst + off * es, src + dense * es, static_cast<std::size_t>(n) * es);
    } else {
      for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + (off + i * stride) * es, src + (dense + i) * es, es);
    }
  });
}

/// Adds the dense buffer `in` into the view's region.
inline void accum_view(const ResolvedView& v, const Buffer& in) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = v.buffer->data<T>();
    const T* src = in.data<T>();
    detail::for_each_row(v, [&](std::int64_t off, std::int64_t dense, std::int64_t n, std::int64_t stride) {
      if constexpr (std::is_same_v<T, bool>) {
        for (std::int64_t i = 0; i < n; ++i) dst[off + i * stride] = dst[off + i * stride] || src[dense + i];
      } else {
        for (std::int64_t i = 0; i < n; ++i)
          dst[off + i * stride] = detail::wrapping_add(dst[off + i * stride], src[dense + i]);
      }
    });
  });
}

/// Takes the elementwise maximum of the view's region and the dense buffer `in`.
/// A NaN on either side wins (as prim::max does), so combining is order-independent.
inline void max_view(const ResolvedView& v, const Buffer& in) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = v.buffer->data<T>();
    const T* src = in.data<T>();
    detail::for_each_row(v, [&](std::int64_t off, std::int64_t dense, std::int64_t n, std::int64_t stride) {
      for (std::int64_t i = 0; i < n; ++i) {
        T& d = dst[off + i * stride];
        const T s = src[dense + i];
        bool take = d < s;
        if constexpr (is_floating_v<T>) take = take || (s != s && d == d);  // s is NaN, d is not
        if (take) d = s;
      }
    });
  });
}

/// Copies between two views of equal shape and dtype (overwriting or combining).
inline void copy_view(const ResolvedView& src, const ResolvedView& dst, CopyReduce reduce) {
  Buffer tmp(src.buffer->dtype(), src.shape);
  read_view(src, tmp);
  switch (reduce) {
    case CopyReduce::none: write_view(dst, tmp); break;
    case CopyReduce::sum: accum_view(dst, tmp); break;
    case CopyReduce::max: max_view(dst, tmp); break;
  }
}

}  // namespace refx
