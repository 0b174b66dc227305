#pragma once
// `fused`: a chain of elementwise ops run as one loop over the output, made by
// the fusion pass (passes/fuse.hpp), never traced directly. The loop walks
// the output in tiles of `fused_tile` elements; for each tile every member
// op's own ElementwiseFn runs on small per-thread tile buffers, in program
// order, so no full-size intermediate exists and each element sees the same
// operations in the same order as unfused (bit-identical results). Trees of
// f32 arithmetic members run as stage programs (detail/fused_plan.hpp,
// detail/fused_stages.hpp), intermediates in registers.
// A single member that reads and writes memory directly (a refx::map between
// its loads and its store) runs over all the elements in one call.
//
//   inputs   values the chain reads: full arrays, or values it broadcasts to
//            the loop's shape (scalars, or arrays with extent-1 dimensions:
//            the loop reads them in place, never a broadcast copy)
//   views    Refs it reads directly (fused loads), then optionally the
//            region it stores into or accumulates into (a fused store)
//   outputs  the chain's result, unless it is stored into a view
//   attrs    made by fused_attrs(): the member ops in execution order,
//            where each input comes from, and the tile buffers' layout
//            out_mode: 0 value, 1 store into the last view, 2 accumulate
//            source: (kind << 32) | index, kind 0 input array, 1 member,
//            2 input broadcast to the loop's shape, 3 load view
// The member ops stay in the graph's op pool (out of every block): they are
// the fused op's program.

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>
#include <refx/ir/primitives/detail/elementwise_fns.hpp>
#include <refx/ir/primitives/detail/fused_plan.hpp>

namespace refx::prim {

/// Elements per tile of a fused loop.
inline constexpr std::int64_t fused_tile = 512;
/// How many tiles ahead the loop prefetches the arrays it streams from memory.
inline constexpr std::int64_t prefetch_distance = 6;
/// ... when they hold more than this many bytes together: smaller ones come
/// from the caches, where the prefetches only cost instructions (measured:
/// a 64 Ki-element loop took 1.4x as long with them, a 4 Mi one 0.9x).
inline constexpr std::int64_t prefetch_min_bytes = std::int64_t{1} << 20;
/// At most this many ops are fused into one loop, each with at most this many inputs.
inline constexpr std::size_t fused_max_members = 64;
inline constexpr std::size_t fused_max_inputs = 8;
/// ... and at most this many distinct inputs and views for the whole loop.
inline constexpr std::size_t fused_max_operands = 32;
/// The shortest run of one broadcast value (a <R, 1> column's row, C long)
/// that a stage program takes in a register rather than from a filled tile:
/// below it, a program call per run costs more than filling the tile
/// (measured on 128 x 256 and 512 x 64 f32 blocks).
inline constexpr std::int64_t fused_row_min = 256;
static_assert(fused_max_inputs == std::tuple_size_v<decltype(detail::FusedMember::base)>);
static_assert(fused_max_members <= detail::stage_max_steps);

enum class FusedSource : std::int64_t { input = 0, member = 1, broadcast = 2, load = 3 };
enum class FusedOut : std::int64_t { value = 0, store = 1, accum = 2 };

inline constexpr std::int64_t fused_source(FusedSource k, std::int64_t index) {
  return (static_cast<std::int64_t>(k) << 32) | index;
}

}  // namespace refx::prim

namespace refx::detail {

inline void gather(const ResolvedView& v, std::int64_t b, std::int64_t m, std::byte* out) {
  const std::size_t es = size_of(v.buffer->dtype());
  const auto e = static_cast<std::int64_t>(es);
  const std::byte* base = v.buffer->data();
  for_each_run(v, b, m, [&](std::int64_t off, std::int64_t at, std::int64_t n, std::int64_t stride) {
    copy_run(base + off * e, stride, n, es, out + at * e);
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
        // Integer sums wrap, as accum_view's do (no signed overflow).
        for (std::int64_t i = 0; i < n; ++i) d[i * stride] = refx::detail::wrapping_add(d[i * stride], s[i]);
      }
    });
  });
}

template <class F, class T, bool ScalarRight>
void scalar_kernel(const void* array, const void* scalar, void* out, std::int64_t n) {
  const T* x = static_cast<const T*>(array);
  const T c = *static_cast<const T*>(scalar);
  T* o = static_cast<T*>(out);
  // The functor and operand order of binary_kernel: bit-identical results.
  for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(ScalarRight ? F{}(x[i], c) : F{}(c, x[i]));
}

template <class T, bool ScalarRight>
ScalarFn scalar_fn_of(const Primitive* p) {
  if (p == &prim::add) return &scalar_kernel<Add, T, ScalarRight>;
  if (p == &prim::sub) return &scalar_kernel<Sub, T, ScalarRight>;
  if (p == &prim::mul) return &scalar_kernel<Mul, T, ScalarRight>;
  if (p == &prim::max) return &scalar_kernel<Max, T, ScalarRight>;
  if (p == &prim::min) return &scalar_kernel<Min, T, ScalarRight>;
  return nullptr;
}
/// The scalar kernel of an f32 / f64 arithmetic op, or null.
inline ScalarFn scalar_fn(const Primitive* p, DType t, bool scalar_right) {
  if (t == DType::f32) return scalar_right ? scalar_fn_of<float, true>(p) : scalar_fn_of<float, false>(p);
  if (t == DType::f64) return scalar_right ? scalar_fn_of<double, true>(p) : scalar_fn_of<double, false>(p);
  return nullptr;
}

/// The index of an f32 op in the stage alphabet (StageOp, fused_stages.hpp), or -1.
inline int stage_op_index(const Primitive* p, DType in, std::int64_t inputs) {
  if (in != DType::f32 || inputs != 2) return -1;
  if (p == &prim::add) return 0;
  if (p == &prim::sub) return 1;
  if (p == &prim::mul) return 2;
  if (p == &prim::max) return 3;
  if (p == &prim::min) return 4;
  return -1;
}

inline std::byte* fused_scratch(std::size_t bytes) {
  thread_local std::vector<std::byte> scratch;
  if (scratch.size() < bytes) scratch.resize(bytes);
  return scratch.data();
}

// attrs: [members, out_mode, loads, elements, scratch bytes, inputs,
//         the loop's rank and extents (max_rank of them),
//         per input: its broadcast tile's offset or -1 (a scalar's tile is
//           filled once; an array's is read for each tile),
//         per load: its gather tile's offset (used if the view is strided),
//         per member: op id, input dtype, tile offset, input count, sources...]
inline constexpr std::size_t fused_header = 7 + max_rank;

// The run length of a broadcast input that is a column of the loop's shape:
// its leading extents are the loop's and the rest 1 (a <R, 1> value over
// R x C: runs of C elements, one value each); 0 otherwise.
inline std::int64_t column_run(const Shape& in, const Shape& shape) {
  const std::size_t rank = shape.rank();
  if (in.rank() != rank || rank == 0) return 0;
  std::size_t kept = 0;
  while (kept < rank && in[kept] == shape[kept]) ++kept;
  if (kept == 0 || kept == rank) return 0;
  std::int64_t run = 1;
  for (std::size_t d = kept; d < rank; ++d) {
    if (in[d] != 1) return 0;
    run *= shape[d];
  }
  return run;
}

// Fills `len` elements of a column's tile: runs of `run` copies of one
// element each, the first at element `col` of row `row`.
inline void fill_column(const std::byte* in, std::size_t es, std::int64_t run, std::int64_t row, std::int64_t col,
                        std::int64_t len, std::byte* dst) {
  const auto e = static_cast<std::int64_t>(es);
  for (std::int64_t at = 0, left = run - col; at < len; ++row, left = run) {
    const std::int64_t n = std::min(len - at, left);
    copy_run(in + row * e, 0, n, es, dst + at * e);
    at += n;
  }
}

// The columns (column_run) a fused loop holds in registers instead of
// filling their tiles: f32, runs of at least fused_row_min elements, all of
// one length, read only as operand 0 or 1 of stage programs, which take
// each run's value in a register. Sets row[i] per input; returns the run
// length (0: none).
inline std::int64_t row_broadcasts(const ExecContext& ctx, const Op& op, std::span<const std::int64_t> a,
                                   const Shape& shape, std::array<bool, prim::fused_max_operands>& row) {
  const auto members = static_cast<std::size_t>(a[0]), loads = static_cast<std::size_t>(a[2]);
  const auto num_inputs = static_cast<std::size_t>(a[5]);
  const std::int64_t* scalar_slot = a.data() + fused_header;
  std::int64_t run = 0;
  for (std::size_t i = 0; i < num_inputs; ++i) {
    const Buffer& in = ctx.in(op, i);
    const std::int64_t len = scalar_slot[i] < 0 || in.dtype() != DType::f32 ? 0 : column_run(in.shape(), shape);
    row[i] = len >= prim::fused_row_min && (run == 0 || len == run);
    if (row[i]) run = len;
  }
  if (run == 0) return 0;
  for (std::size_t k = 0, at = fused_header + num_inputs + loads; k < members; ++k) {
    const Primitive* p = ctx.graph().op(static_cast<OpId>(a[at])).prim;
    const std::int64_t inputs = a[at + 3];
    const bool staged = stage_op_index(p, static_cast<DType>(a[at + 1]), inputs) >= 0;
    for (std::int64_t j = 0; j < inputs; ++j) {
      const std::int64_t src = a[at + 4 + static_cast<std::size_t>(j)];
      if (static_cast<prim::FusedSource>(src >> 32) == prim::FusedSource::broadcast && !(staged && j < 2))
        row[static_cast<std::size_t>(src & 0xffffffff)] = false;  // read as a tile
    }
    at += 4 + static_cast<std::size_t>(inputs);
  }
  const auto held = std::span(row).first(num_inputs);
  return std::any_of(held.begin(), held.end(), [](bool r) { return r; }) ? run : 0;
}

inline ExecStatus fused_impl(ExecContext& ctx, const Op& op) {
  const Graph& g = ctx.graph();
  const auto a = g.attrs(op);
  const auto members = static_cast<std::size_t>(a[0]);
  const auto mode = static_cast<prim::FusedOut>(a[1]);
  const auto loads = static_cast<std::size_t>(a[2]);
  const std::int64_t n = a[3];
  const auto num_inputs = static_cast<std::size_t>(a[5]);
  const std::int64_t* scalar_slot = a.data() + fused_header;
  const std::int64_t* gather_slot = scalar_slot + num_inputs;
  std::byte* scratch = fused_scratch(static_cast<std::size_t>(a[4]));
  const std::int64_t first_len = std::min(n, prim::fused_tile);
  const Shape shape(std::span(a.data() + 7, static_cast<std::size_t>(a[6])));
  // Broadcast inputs: a scalar fills its tile once; an array with extent-1
  // dimensions is read into its tile for each tile, through zero strides,
  // and once when its pattern repeats with a period that divides the tile (a
  // <1, N> row with N dividing it: every tile then holds the same elements).
  // A column (<R, 1>: runs of one value) is held in a register by the stage
  // programs that read it (row_broadcasts), or else filled run by run; where
  // the tile starts in the columns' runs is kept from tile to tile (no
  // division per tile).
  std::array<bool, prim::fused_max_operands> row;
  const std::int64_t row_len = row_broadcasts(ctx, op, a, shape, row);
  std::array<std::size_t, prim::fused_max_operands> stretched, columns;
  std::size_t num_stretched = 0, num_columns = 0;
  std::int64_t column_len = row_len;
  bool stretches = false;
  for (std::size_t i = 0; i < num_inputs; ++i) {
    if (scalar_slot[i] < 0 || ctx.in(op, i).shape().rank() == 0) continue;
    stretches = true;
    if (row[i]) continue;
    const Buffer& in = ctx.in(op, i);
    if (prim::fused_tile % broadcast_period(in.shape(), shape) == 0) {
      read_broadcast(in.data(), in.shape(), shape, size_of(in.dtype()), 0, first_len, scratch + scalar_slot[i]);
      continue;
    }
    const std::int64_t run = column_run(in.shape(), shape);
    if (run > 0 && (column_len == 0 || run == column_len)) {
      column_len = run;
      columns[num_columns++] = i;
    } else {
      stretched[num_stretched++] = i;
    }
  }
  const std::size_t num_views = loads + (mode == prim::FusedOut::value ? 0 : 1);
  // Views are constructed only as used: value-initializing all 33 would
  // zero 4 KiB per call, which dominated small fused ops (a collective's
  // combine over a few hundred elements).
  static_assert(std::is_trivially_copyable_v<ResolvedView> && std::is_trivially_destructible_v<ResolvedView>);
  alignas(ResolvedView) std::byte view_storage[sizeof(ResolvedView) * (prim::fused_max_operands + 1)];
  auto* const views = reinterpret_cast<ResolvedView*>(view_storage);
  std::array<bool, prim::fused_max_operands + 1> view_dense;
  for (std::size_t l = 0; l < num_views; ++l) {
    ::new (static_cast<void*>(views + l)) ResolvedView(ctx.view(op, l));
    view_dense[l] = is_contiguous(views[l]);
  }
  // The arrays the loop streams from memory, prefetched ahead of the tile
  // being computed so memory traffic overlaps the tile's compute.
  std::array<std::pair<const std::byte*, std::int64_t>, prim::fused_max_operands + 2> streams;
  std::size_t num_streams = 0;
  if (n > prim::fused_tile) {
    for (std::size_t l = 0; l < loads; ++l)
      if (view_dense[l]) {
        const auto es = static_cast<std::int64_t>(size_of(views[l].buffer->dtype()));
        streams[num_streams++] = {views[l].buffer->data() + views[l].offset * es, es};
      }
    for (std::size_t i = 0; i < num_inputs; ++i)
      if (scalar_slot[i] < 0)
        streams[num_streams++] = {ctx.in(op, i).data(), static_cast<std::int64_t>(size_of(ctx.in(op, i).dtype()))};
  }
  std::byte* out_value = mode == prim::FusedOut::value ? ctx.out(op, 0).data() : nullptr;
  const DType out_type = mode == prim::FusedOut::value ? ctx.out(op, 0).dtype() : views[loads].buffer->dtype();
  const auto out_es = static_cast<std::int64_t>(size_of(out_type));
  const ResolvedView* store = mode == prim::FusedOut::value ? nullptr : &views[loads];
  const bool store_direct = mode == prim::FusedOut::store && view_dense[loads];
  // ... and the one it writes (prefetched for writing).
  const std::byte* out_stream = out_value != nullptr ? out_value
                                : store_direct       ? store->buffer->data() + store->offset * out_es
                                                     : nullptr;
  const std::size_t read_streams = num_streams;
  if (n > prim::fused_tile && out_stream != nullptr) streams[num_streams++] = {out_stream, out_es};
  std::int64_t streamed = 0;
  for (std::size_t s = 0; s < num_streams; ++s) streamed += n * streams[s].second;
  if (streamed <= prim::prefetch_min_bytes) num_streams = 0;

  // Each member call prefetches its share of a tile, in whole cache lines.
  std::array<std::int64_t, prim::fused_max_operands + 2> chunk_bytes;
  for (std::size_t s = 0; s < num_streams; ++s) {
    const std::int64_t lines = (prim::fused_tile * streams[s].second + 63) / 64;
    chunk_bytes[s] = (lines + static_cast<std::int64_t>(members) - 1) / static_cast<std::int64_t>(members) * 64;
  }

  // Members are not value-initialized (64 of them: 18 KiB); each sets what it uses.
  std::array<FusedMember, prim::fused_max_members> m;
  for (std::size_t k = 0, at = fused_header + num_inputs + loads; k < members; ++k) {
    FusedMember& f = m[k];
    const Primitive* prim = g.op(static_cast<OpId>(a[at])).prim;
    f.fn = prim->elementwise;
    f.in = static_cast<DType>(a[at + 1]);
    f.slot = a[at + 2];
    f.inputs = a[at + 3];
    f.sfn = nullptr;
    f.scalar_at = -1;
    f.producer = {-1, -1};
    f.scalar = {nullptr, nullptr};
    f.varying = {false, false};
    f.uses = 0;
    f.inlined = false;
    f.stage_op = static_cast<std::int8_t>(stage_op_index(prim, f.in, f.inputs));
    const std::int64_t* sources = a.data() + at + 4;
    for (std::int64_t j = 0; j < f.inputs; ++j) {
      const std::int64_t src = sources[j];
      const auto idx = static_cast<std::size_t>(src & 0xffffffff);
      const auto u = static_cast<std::size_t>(j);
      f.step[u] = 0;
      if (static_cast<prim::FusedSource>(src >> 32) == prim::FusedSource::member) {
        ++m[idx].uses;  // every input counts: a member read twice, or by a select, is not inlined
        if (j < 2) f.producer[u] = static_cast<std::int8_t>(idx);
      }
      switch (static_cast<prim::FusedSource>(src >> 32)) {
        case prim::FusedSource::input: {
          const Buffer& in = ctx.in(op, idx);
          f.base[u] = in.data();
          f.step[u] = static_cast<std::int64_t>(size_of(in.dtype()));
          break;
        }
        case prim::FusedSource::member: f.base[u] = scratch + m[idx].slot; break;
        case prim::FusedSource::broadcast:
          f.base[u] = scratch + scalar_slot[idx];
          if (f.stage_op >= 0 && u < 2 && (ctx.in(op, idx).shape().rank() == 0 || row[idx])) {
            f.scalar[u] = ctx.in(op, idx).data<float>();  // a register in the member's program
            f.varying[u] = row[idx];                      // ... set per run
          }
          if (f.inputs == 2 && f.scalar_at < 0 && ctx.in(op, idx).shape().rank() == 0) {
            f.scalar_at = j;
            f.sfn = scalar_fn(prim, f.in, j == 1);
          }
          break;
        case prim::FusedSource::load: {
          const ResolvedView& v = views[idx];
          const auto es = static_cast<std::int64_t>(size_of(v.buffer->dtype()));
          f.base[u] = view_dense[idx] ? v.buffer->data() + v.offset * es : scratch + gather_slot[idx];
          f.step[u] = view_dense[idx] ? es : 0;
          break;
        }
      }
    }
    if (f.sfn != nullptr)
      f.base[static_cast<std::size_t>(f.scalar_at)] =
          ctx.in(op, static_cast<std::size_t>(sources[f.scalar_at] & 0xffffffff)).data();
    at += 4 + static_cast<std::size_t>(f.inputs);
  }
  // The f32 arithmetic members run as stage programs (not value-initialized
  // either: 6 KiB; the plan writes the steps it uses).
  std::array<StageStep, prim::fused_max_members> steps;
  std::array<StageOrigin, prim::fused_max_members> origins;
  plan_programs(std::span(m.data(), members), steps, origins);
  // The programs that hold a column's row value (row_broadcasts).
  std::array<bool, prim::fused_max_members> by_rows{};
  if (row_len > 0)
    for (std::size_t k = 0; k < members; ++k)
      if (m[k].program >= 0)
        for (std::int32_t s = m[k].program; s < m[k].program + m[k].program_steps; ++s)
          by_rows[k] = by_rows[k] || origins[static_cast<std::size_t>(s)].row[0] != nullptr ||
                       origins[static_cast<std::size_t>(s)].row[1] != nullptr;
  // A scalar's tile is filled once, for the members that read it as a tile
  // (a program holds it in a register).
  for (std::size_t k = 0, at = fused_header + num_inputs + loads; k < members; ++k) {
    const std::int64_t* sources = a.data() + at + 4;
    at += 4 + static_cast<std::size_t>(m[k].inputs);
    if (m[k].program >= 0 || m[k].inlined) continue;
    for (std::int64_t j = 0; j < m[k].inputs; ++j) {
      const auto idx = static_cast<std::size_t>(sources[j] & 0xffffffff);
      if (static_cast<prim::FusedSource>(sources[j] >> 32) != prim::FusedSource::broadcast ||
          (j == m[k].scalar_at && m[k].sfn != nullptr) || ctx.in(op, idx).shape().rank() != 0)
        continue;
      const Buffer& s = ctx.in(op, idx);
      copy_run(s.data(), 0, first_len, size_of(s.dtype()), scratch + scalar_slot[idx]);
    }
  }

  // A loop whose members are one refx::map or one program, reading its
  // inputs all from memory and writing its result straight to memory, needs
  // no tile buffers: it runs over all n elements in one call, unless the
  // loop prefetches.
  const FusedMember& last = m[members - 1];
  bool whole = num_streams == 0 && (out_value != nullptr || store_direct) && !stretches;
  for (std::size_t l = 0; l < loads; ++l) whole = whole && view_dense[l];
  if (last.program >= 0) {
    whole = whole && last.program_steps == static_cast<std::int32_t>(members);  // all members
    for (std::int32_t k = last.program; whole && k < last.program + last.program_steps; ++k)
      for (std::size_t j = 0; j < 2; ++j) whole = whole && (origins[k].base[j] == nullptr || origins[k].step[j] != 0);
  } else {
    whole = whole && members == 1 && last.sfn == nullptr;
    for (std::size_t j = 0; whole && j < static_cast<std::size_t>(last.inputs); ++j) whole = last.step[j] != 0;
  }
  const std::int64_t tile = whole ? std::max<std::int64_t>(n, 1) : prim::fused_tile;

  std::array<const void*, prim::fused_max_inputs> ptrs{};
  std::int64_t column_row = 0, column_col = 0;  // where the tile starts in the columns' runs
  for (std::int64_t b = 0; b < n; b += tile) {
    const std::int64_t len = std::min(tile, n - b);
    const std::int64_t ahead = b + prim::prefetch_distance * prim::fused_tile;
    const std::int64_t ahead_len = num_streams > 0 && ahead < n ? std::min(prim::fused_tile, n - ahead) : 0;
    for (std::size_t l = 0; l < loads; ++l)
      if (!view_dense[l]) gather(views[l], b, len, scratch + gather_slot[l]);
    for (std::size_t s = 0; s < num_stretched; ++s) {
      const Buffer& in = ctx.in(op, stretched[s]);
      read_broadcast(in.data(), in.shape(), shape, size_of(in.dtype()), b, len, scratch + scalar_slot[stretched[s]]);
    }
    for (std::size_t c = 0; c < num_columns; ++c) {
      const Buffer& in = ctx.in(op, columns[c]);
      fill_column(in.data(), size_of(in.dtype()), column_len, column_row, column_col, len,
                  scratch + scalar_slot[columns[c]]);
    }
    for (std::size_t k = 0; k < members; ++k) {
      // Spread the prefetches of a later tile over this tile's member calls.
      if (ahead_len > 0)
        for (std::size_t s = 0; s < num_streams; ++s) {
          const std::int64_t bytes = ahead_len * streams[s].second, chunk = chunk_bytes[s];
          const std::int64_t from = static_cast<std::int64_t>(k) * chunk;
          const std::int64_t to = std::min(bytes, from + chunk);
          const std::byte* base = streams[s].first + ahead * streams[s].second;
          if (s < read_streams)
            for (std::int64_t off = from; off < to; off += 64) __builtin_prefetch(base + off, 0);
          else
            for (std::int64_t off = from; off < to; off += 64) __builtin_prefetch(base + off, 1);
        }
      const FusedMember& f = m[k];
      if (f.inlined) continue;
      void* out = scratch + f.slot;
      if (k + 1 == members) {
        if (out_value != nullptr) out = out_value + b * out_es;
        else if (store_direct) out = store->buffer->data() + (store->offset + b) * out_es;
      }
      if (f.program >= 0) {
        StageStep* const s = steps.data() + f.program;
        const StageOrigin* const o = origins.data() + f.program;
        const auto count = static_cast<std::size_t>(f.program_steps);
        if (!by_rows[k]) {
          place_program(s, o, count, b, out);
          run_stage_program(f.run, s, count, len);
          continue;
        }
        for (std::int64_t at = 0, r = column_row, left = row_len - column_col; at < len; ++r, left = row_len) {
          const std::int64_t run = std::min(len - at, left);  // one run of a row at a time
          place_rows(s, o, count, r);
          place_program(s, o, count, b, out, at);
          run_stage_program(f.run, s, count, run);
          at += run;
        }
        continue;
      }
      for (std::size_t j = 0; j < static_cast<std::size_t>(f.inputs); ++j) ptrs[j] = f.base[j] + b * f.step[j];
      if (f.sfn != nullptr)
        f.sfn(ptrs[f.scalar_at == 0 ? 1 : 0], ptrs[static_cast<std::size_t>(f.scalar_at)], out, len);
      else f.fn(f.in, ptrs.data(), out, len);
    }
    if (store != nullptr && !store_direct)
      scatter(*store, b, len, scratch + m[members - 1].slot, mode == prim::FusedOut::accum);
    if (column_len > 0)
      for (column_col += len; column_col >= column_len; column_col -= column_len) ++column_row;
  }
  return ExecStatus::done;
}

}  // namespace refx::detail

namespace refx::prim {

/// One member of a fused loop: its op and where each of its inputs comes
/// from (fused_source(kind, index)).
struct FusedMemberSpec {
  OpId op;
  std::vector<std::int64_t> sources;
};

/// The attributes of a fused op over `members` (in execution order), with
/// `num_inputs` value inputs and the given fused loads (their Refs' dtypes):
/// the members and the layout of the loop's tile buffers.
inline std::vector<std::int64_t> fused_attrs(const Graph& g, std::span<const FusedMemberSpec> members, FusedOut mode,
                                             std::span<const ValueId> inputs, std::span<const ViewId> loads) {
  const ValueType& result = g.type(g.outputs(g.op(members.back().op))[0]);
  const std::int64_t n = result.shape.num_elements(), tile = std::min(n, fused_tile);
  std::int64_t bytes = 0;
  const auto reserve = [&](DType t) {
    const std::int64_t at = bytes;
    bytes = (bytes + tile * static_cast<std::int64_t>(size_of(t)) + 63) & ~std::int64_t{63};
    return at;
  };
  std::vector<std::int64_t> a{static_cast<std::int64_t>(members.size()),
                              static_cast<std::int64_t>(mode),
                              static_cast<std::int64_t>(loads.size()),
                              n,
                              0,
                              static_cast<std::int64_t>(inputs.size()),
                              static_cast<std::int64_t>(result.shape.rank())};
  for (std::size_t d = 0; d < max_rank; ++d) a.push_back(d < result.shape.rank() ? result.shape[d] : 0);
  std::vector<char> broadcast(inputs.size(), 0);
  for (const FusedMemberSpec& m : members)
    for (std::int64_t s : m.sources)
      if (static_cast<FusedSource>(s >> 32) == FusedSource::broadcast)
        broadcast[static_cast<std::size_t>(s & 0xffffffff)] = 1;
  for (std::size_t i = 0; i < inputs.size(); ++i) a.push_back(broadcast[i] ? reserve(g.type(inputs[i]).dtype) : -1);
  for (ViewId v : loads) a.push_back(reserve(g.type(g.view(v).ref).dtype));
  for (const FusedMemberSpec& m : members) {
    const Op& op = g.op(m.op);
    const auto ins = g.inputs(op);
    a.push_back(m.op);
    a.push_back(static_cast<std::int64_t>(g.type(ins[ins.size() == 3 ? 1 : 0]).dtype));  // as elementwise_impl
    a.push_back(reserve(g.type(g.outputs(op)[0]).dtype));
    a.push_back(static_cast<std::int64_t>(m.sources.size()));
    a.insert(a.end(), m.sources.begin(), m.sources.end());
  }
  a[4] = bytes;
  return a;
}

}  // namespace refx::prim

namespace refx::detail {

inline void fused_abstract(AbstractContext& c) {
  c.fail("fused ops are made by the fusion pass (refx::passes::fuse), not traced");
}

inline void fused_print(const Graph& g, const Op& op, std::string& s) {
  const auto a = g.attrs(op);
  std::vector<std::string_view> names;
  std::size_t at = fused_header + static_cast<std::size_t>(a[5] + a[2]);
  for (std::int64_t k = 0; k < a[0]; ++k) {
    const std::string_view name = g.op(static_cast<OpId>(a[at])).prim->name;
    names.push_back(name.starts_with("map#") ? std::string_view("map") : name);  // refx::map: "map#<n>"
    at += 4 + static_cast<std::size_t>(a[at + 3]);
  }
  const auto mode = static_cast<prim::FusedOut>(a[1]);
  s += fmt::format("fused[{}{}{}]", fmt::join(names, " "), a[2] ? fmt::format(" loads={}", a[2]) : "",
                   mode == prim::FusedOut::store   ? " store"
                   : mode == prim::FusedOut::accum ? " accum"
                                                   : "");
}

}  // namespace refx::detail

namespace refx::prim {

#if REFX_DEFINITIONS
// Constant-initialised (no dynamic initialisation): usable from any static
// initializer, whatever the order of translation units.
namespace defs {
// Pure only without views: one that loads or stores reaches Refs
// (ExecContext keeps the results of view-less ops only).
inline constexpr Primitive fused = detail::as_pure(Primitive{"fused", detail::fused_abstract, detail::fused_impl,
                                                             detail::fused_print, nullptr, ControlKind::none, nullptr});
}  // namespace defs
REFX_DECL constinit const Primitive& fused = defs::fused;
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim

// The list of built-in primitives is defined once every one of them is.
#define REFX_BUILTINS_FUSED_DEFINED
#include <refx/ir/primitives/detail/builtin_list.hpp>
