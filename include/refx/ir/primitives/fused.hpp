#pragma once
// `fused`: a chain of elementwise ops run as one loop over the output, made by
// the fusion pass (passes/fuse.hpp), never traced directly. The loop walks
// the output in tiles of `fused_tile` elements; for each tile every member
// op's own ElementwiseFn runs on small per-thread tile buffers, in program
// order, so no full-size intermediate exists and each element sees the same
// operations in the same order as unfused (bit-identical results).
//
//   inputs   values the chain reads: full arrays, or scalars it broadcasts
//   views    Refs it reads directly (fused loads), then optionally the
//            region it stores into or accumulates into (a fused store)
//   outputs  the chain's result, unless it is stored into a view
//   attrs    [members, out_mode, loads, then per member:
//             op id, input dtype, input count, sources...]
//            out_mode: 0 value, 1 store into the last view, 2 accumulate
//            source: (kind << 32) | index, kind 0 input array, 1 member,
//            2 input scalar (broadcast), 3 load view
// The member ops stay in the graph's op pool (out of every block): they are
// the fused op's program.

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>

namespace refx::prim {

/// Elements per tile of a fused loop.
inline constexpr std::int64_t fused_tile = 1024;
/// How many tiles ahead the loop prefetches the arrays it streams from memory.
inline constexpr std::int64_t prefetch_distance = 1;
/// At most this many ops are fused into one loop, each with at most this many inputs.
inline constexpr std::size_t fused_max_members = 64;
inline constexpr std::size_t fused_max_inputs = 8;
/// ... and at most this many distinct inputs and views for the whole loop.
inline constexpr std::size_t fused_max_operands = 32;

enum class FusedSource : std::int64_t { input = 0, member = 1, scalar = 2, load = 3 };
enum class FusedOut : std::int64_t { value = 0, store = 1, accum = 2 };

inline constexpr std::int64_t fused_source(FusedSource k, std::int64_t index) {
  return (static_cast<std::int64_t>(k) << 32) | index;
}

namespace detail {

/// Calls f(view offset, dense offset from b, count, stride) for the runs of
/// dense elements [b, b + m) of a resolved view.
template <class F>
void for_each_run(const ResolvedView& v, std::int64_t b, std::int64_t m, F&& f) {
  const std::size_t r = v.shape.rank();
  if (r == 0) {
    f(v.offset, std::int64_t{0}, std::int64_t{1}, std::int64_t{1});
    return;
  }
  const std::int64_t inner = v.shape[r - 1];
  for (std::int64_t i = b; i < b + m;) {
    std::int64_t row = i / inner;
    const std::int64_t col = i % inner;
    std::int64_t off = v.offset;
    for (std::size_t d = r - 1; d-- > 0;) {
      off += (row % v.shape[d]) * v.strides[d];
      row /= v.shape[d];
    }
    const std::int64_t cnt = std::min(inner - col, b + m - i);
    f(off + col * v.strides[r - 1], i - b, cnt, v.strides[r - 1]);
    i += cnt;
  }
}

inline bool dense(const ResolvedView& v) {
  std::int64_t expect = 1;
  for (std::size_t d = v.shape.rank(); d-- > 0;) {
    if (v.shape[d] != 1 && v.strides[d] != expect) return false;
    expect *= v.shape[d];
  }
  return true;
}

inline void gather(const ResolvedView& v, std::int64_t b, std::int64_t m, std::byte* out) {
  const auto es = static_cast<std::int64_t>(size_of(v.buffer->dtype()));
  const std::byte* base = v.buffer->data();
  for_each_run(v, b, m, [&](std::int64_t off, std::int64_t at, std::int64_t n, std::int64_t stride) {
    if (stride == 1) std::memcpy(out + at * es, base + off * es, static_cast<std::size_t>(n * es));
    else
      for (std::int64_t i = 0; i < n; ++i)
        std::memcpy(out + (at + i) * es, base + (off + i * stride) * es, static_cast<std::size_t>(es));
  });
}

inline void scatter(const ResolvedView& v, std::int64_t b, std::int64_t m, const std::byte* in, bool add) {
  visit_dtype(v.buffer->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* base = v.buffer->data<T>();
    const T* src = reinterpret_cast<const T*>(in);
    for_each_run(v, b, m, [&](std::int64_t off, std::int64_t at, std::int64_t n, std::int64_t stride) {
      T* d = base + off;
      const T* s = src + at;
      if (!add) {
        if (stride == 1) std::memcpy(d, s, static_cast<std::size_t>(n) * sizeof(T));
        else
          for (std::int64_t i = 0; i < n; ++i) d[i * stride] = s[i];
      } else if constexpr (std::is_same_v<T, bool>) {
        for (std::int64_t i = 0; i < n; ++i) d[i * stride] = d[i * stride] || s[i];
      } else {
        for (std::int64_t i = 0; i < n; ++i) d[i * stride] += s[i];
      }
    });
  });
}

struct FusedMember {
  ElementwiseFn fn;
  DType in, out;
  std::int64_t inputs;
  const std::int64_t* sources;
};

inline std::byte* fused_scratch(std::size_t bytes) {
  thread_local std::vector<std::byte> scratch;
  if (scratch.size() < bytes) scratch.resize(bytes);
  return scratch.data();
}

inline ExecStatus fused_impl(ExecContext& ctx, const Op& op) {
  const Graph& g = ctx.graph();
  const auto a = g.attrs(op);
  const auto members = static_cast<std::size_t>(a[0]);
  const auto mode = static_cast<FusedOut>(a[1]);
  const auto loads = static_cast<std::size_t>(a[2]);
  const auto ins = g.inputs(op);
  std::array<FusedMember, fused_max_members> m{};
  std::size_t at = 3;
  std::int64_t n = 0;
  for (std::size_t k = 0; k < members; ++k) {
    const Op& member = g.op(static_cast<OpId>(a[at]));
    const ValueType& t = g.type(g.outputs(member)[0]);
    m[k] = FusedMember{member.prim->elementwise, static_cast<DType>(a[at + 1]), t.dtype, a[at + 2], a.data() + at + 3};
    n = t.shape.num_elements();  // every member has the chain's shape
    at += 3 + static_cast<std::size_t>(a[at + 2]);
  }
  // Tile buffers: one per member, per broadcast scalar input and per strided load.
  std::array<std::size_t, fused_max_members> member_slot{};
  std::array<std::size_t, 2 * fused_max_operands> input_slot{};
  std::size_t bytes = 0;
  const auto reserve = [&](DType t) {
    const std::size_t s = bytes;
    bytes += static_cast<std::size_t>(fused_tile) * size_of(t);
    bytes = (bytes + 63) & ~std::size_t{63};
    return s;
  };
  for (std::size_t k = 0; k < members; ++k) member_slot[k] = reserve(m[k].out);
  std::array<ResolvedView, fused_max_operands + 1> views{};
  std::array<bool, fused_max_operands + 1> view_dense{};
  for (std::size_t l = 0; l < loads + (mode == FusedOut::value ? 0 : 1); ++l) {
    views[l] = ctx.view(op, l);
    view_dense[l] = dense(views[l]);
    if (!view_dense[l] && l < loads) input_slot[ins.size() + l] = reserve(views[l].buffer->dtype());
  }
  std::array<char, fused_max_operands> is_scalar{};
  for (std::size_t k = 0; k < members; ++k)
    for (std::int64_t j = 0; j < m[k].inputs; ++j)
      if (static_cast<FusedSource>(m[k].sources[j] >> 32) == FusedSource::scalar)
        is_scalar[static_cast<std::size_t>(m[k].sources[j] & 0xffffffff)] = 1;
  for (std::size_t i = 0; i < ins.size(); ++i)
    if (is_scalar[i]) input_slot[i] = reserve(ctx.in(op, i).dtype());
  std::byte* scratch = fused_scratch(bytes);
  for (std::size_t i = 0; i < ins.size(); ++i)
    if (is_scalar[i]) {
      const Buffer& s = ctx.in(op, i);
      visit_dtype(s.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        std::fill_n(reinterpret_cast<T*>(scratch + input_slot[i]), std::min(n, fused_tile), *s.data<T>());
      });
    }
  std::byte* out_value = mode == FusedOut::value ? ctx.out(op, 0).data() : nullptr;
  const std::size_t out_es = size_of(m[members - 1].out);
  const ResolvedView* store = mode == FusedOut::value ? nullptr : &views[loads];
  const bool store_direct = mode == FusedOut::store && view_dense[loads];

  // The streams the loop reads from memory (dense loads and array inputs),
  // prefetched one tile ahead so memory traffic overlaps the tile's compute.
  std::array<std::pair<const std::byte*, std::int64_t>, fused_max_operands + 1> streams{};
  std::size_t num_streams = 0;
  for (std::size_t l = 0; l < loads; ++l)
    if (view_dense[l]) {
      const auto es = static_cast<std::int64_t>(size_of(views[l].buffer->dtype()));
      streams[num_streams++] = {views[l].buffer->data() + views[l].offset * es, es};
    }
  for (std::size_t i = 0; i < ins.size(); ++i)
    if (!is_scalar[i] && ctx.in(op, i).size() == n && n > fused_tile)
      streams[num_streams++] = {ctx.in(op, i).data(), static_cast<std::int64_t>(size_of(ctx.in(op, i).dtype()))};

  std::array<const void*, fused_max_inputs> ptrs{};
  for (std::int64_t b = 0; b < n; b += fused_tile) {
    const std::int64_t len = std::min(fused_tile, n - b);
    const std::int64_t ahead = b + prefetch_distance * fused_tile;
    const std::int64_t ahead_len = ahead < n ? std::min(fused_tile, n - ahead) : 0;
    for (std::size_t l = 0; l < loads; ++l)
      if (!view_dense[l]) gather(views[l], b, len, scratch + input_slot[ins.size() + l]);
    for (std::size_t k = 0; k < members; ++k) {
      // Spread the prefetches of a later tile over this tile's member calls.
      if (ahead_len > 0)
        for (std::size_t s = 0; s < num_streams; ++s) {
          const std::int64_t bytes = ahead_len * streams[s].second;
          const std::int64_t from = bytes * static_cast<std::int64_t>(k) / static_cast<std::int64_t>(members) & ~std::int64_t{63};
          const std::int64_t to = bytes * static_cast<std::int64_t>(k + 1) / static_cast<std::int64_t>(members);
          const std::byte* base = streams[s].first + ahead * streams[s].second;
          for (std::int64_t off = from; off < to; off += 64) __builtin_prefetch(base + off);
        }
      for (std::int64_t j = 0; j < m[k].inputs; ++j) {
        const std::int64_t src = m[k].sources[j];
        const auto idx = static_cast<std::size_t>(src & 0xffffffff);
        switch (static_cast<FusedSource>(src >> 32)) {
          case FusedSource::input: {
            const Buffer& in = ctx.in(op, idx);
            ptrs[static_cast<std::size_t>(j)] = in.data() + b * static_cast<std::int64_t>(size_of(in.dtype()));
            break;
          }
          case FusedSource::member: ptrs[static_cast<std::size_t>(j)] = scratch + member_slot[idx]; break;
          case FusedSource::scalar: ptrs[static_cast<std::size_t>(j)] = scratch + input_slot[idx]; break;
          case FusedSource::load: {
            const ResolvedView& v = views[idx];
            const auto es = static_cast<std::int64_t>(size_of(v.buffer->dtype()));
            ptrs[static_cast<std::size_t>(j)] =
                view_dense[idx] ? v.buffer->data() + (v.offset + b) * es : scratch + input_slot[ins.size() + idx];
            break;
          }
        }
      }
      void* out = scratch + member_slot[k];
      if (k + 1 == members) {
        if (out_value != nullptr) out = out_value + static_cast<std::size_t>(b) * out_es;
        else if (store_direct) out = store->buffer->data() + (store->offset + b) * static_cast<std::int64_t>(out_es);
      }
      m[k].fn(m[k].in, ptrs.data(), out, len);
    }
    if (store != nullptr && !store_direct) scatter(*store, b, len, scratch + member_slot[members - 1], mode == FusedOut::accum);
  }
  return ExecStatus::done;
}

inline void fused_abstract(AbstractContext& c) {
  c.fail("fused ops are made by the fusion pass (refx::passes::fuse), not traced");
}

inline void fused_print(const Graph& g, const Op& op, std::string& s) {
  const auto a = g.attrs(op);
  std::vector<std::string_view> names;
  std::size_t at = 3;
  for (std::int64_t k = 0; k < a[0]; ++k) {
    names.push_back(g.op(static_cast<OpId>(a[at])).prim->name);
    at += 3 + static_cast<std::size_t>(a[at + 2]);
  }
  const auto mode = static_cast<FusedOut>(a[1]);
  s += fmt::format("fused[{}{}{}]", fmt::join(names, " "), a[2] ? fmt::format(" loads={}", a[2]) : "",
                   mode == FusedOut::store ? " store" : mode == FusedOut::accum ? " accum" : "");
}

}  // namespace detail

inline const Primitive& fused = define_primitive(
    Primitive{"fused", detail::fused_abstract, detail::fused_impl, detail::fused_print, nullptr, ControlKind::none, nullptr});

}  // namespace refx::prim
