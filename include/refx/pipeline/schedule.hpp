#pragma once
// The out-of-line definitions of emit_pipeline's schedule (declared in
// pipeline/operands.hpp): the grid's points, the operand checks, which
// copies each step starts and waits, and program_id / num_programs. Part of
// pipeline.hpp, which includes it at its end when REFX_DEFINITIONS is set
// (compiled once in src/refx.cpp with refx::compiled), so it includes no refx
// header back; range-v3 is included only here.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <range/v3/view/cartesian_product.hpp>
#include <range/v3/view/iota.hpp>

namespace refx {
namespace detail {
REFX_DECL std::vector<std::vector<std::int64_t>> grid_points(std::span<const std::int64_t> dims) {
  namespace rv = ranges::views;
  std::vector<std::vector<std::int64_t>> out;
  const auto axis = [&](std::size_t d) { return rv::iota(std::int64_t{0}, dims[d]); };
  const auto collect = [&](auto&& product) {
    for (const auto& t : product)
      out.push_back(std::apply([](auto... i) { return std::vector<std::int64_t>{i...}; }, t));
  };
  switch (dims.size()) {
    case 1: collect(rv::cartesian_product(axis(0))); break;
    case 2: collect(rv::cartesian_product(axis(0), axis(1))); break;
    case 3: collect(rv::cartesian_product(axis(0), axis(1), axis(2))); break;
    case 4: collect(rv::cartesian_product(axis(0), axis(1), axis(2), axis(3))); break;
    default: throw TraceError("refx: a pipeline grid has 1 to 4 dimensions");
  }
  return out;
}

REFX_DECL std::string index_map_reads(const void* c, ValueId ref) {
  const auto& call = *static_cast<const IndexMapCall*>(c);
  const Graph& g = Tracer::current().graph();
  std::string name = fmt::format("a Smem Ref (shape {})", g.type(ref).shape);
  for (std::size_t j = 0; j < call.scalar_refs.size(); ++j)
    if (call.scalar_refs[j] == ref) name = fmt::format("scalar operand {} (shape {})", j, g.type(ref).shape);
  if (call.point.empty())  // a rolled grid: the step is a traced value
    return fmt::format(
        "{}: the index map of operand {} ({}) reads {} out of its range at a step of a rolled grid "
        "(grid(...).unrolled() names the step)",
        pipeline_entry(), call.k, role_name(call.role), name);
  return fmt::format("{}: the index map of operand {} ({}) reads {} out of its range at grid step ({})",
                     pipeline_entry(), call.k, role_name(call.role), name, fmt::join(call.point, ", "));
}

REFX_DECL void index_map_failed(const TraceError& e, const IndexMapCall& call, std::size_t views_before,
                                SourceLoc loc) {
  std::string what = e.what();
  if (what.rfind("refx: ", 0) == 0) what.erase(0, 6);
  const Graph& g = Tracer::current(loc).graph();
  // The Smem Ref the map read last, if it made a view of one: a scalar
  // operand of pipeline_kernel, or one the map captured.
  ValueId ref = no_id;
  for (std::size_t v = g.num_views(); v-- > views_before && ref == no_id;)
    if (const ValueId r = g.view(static_cast<ViewId>(v)).ref; g.type(r).space == MemorySpace::smem) ref = r;
  if (ref == no_id || what.find("out of bounds") == std::string::npos) throw e;
  throw TraceError(fmt::format("refx: {}: {}", index_map_reads(&call, ref), what));
}

REFX_DECL void check_index_map_memory(const IndexMapCall& call, std::size_t ops_before, SourceLoc fallback) {
  const Graph& g = Tracer::current(fallback).graph();
  for (std::size_t o = ops_before; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    for (const ViewId v : g.views(op)) {
      const ValueType& type = g.type(g.view(v).ref);
      if (type.space == MemorySpace::smem) continue;
      const char* space = type.space == MemorySpace::vmem  ? "Vmem"
                          : type.space == MemorySpace::hbm ? "Hbm"
                                                           : "semaphore";
      const std::string step = call.point.empty() ? std::string("at a step of a rolled grid")
                                                  : fmt::format("at grid step ({})", fmt::join(call.point, ", "));
      trace_error(op.loc.known() ? op.loc : fallback,
                  hint("pass the table as a pipeline_kernel scalar operand (SmemRef<const std::int32_t, N>, "
                       "Pallas' scalar prefetch), or copy it into a Smem Ref the map reads"),
                  "{}: the index map of operand {} ({}) reads a {} Ref ({}{}) {}; an index map runs on the scalar "
                  "core, which reads Smem only",
                  pipeline_entry(), call.k, role_name(call.role), space, type.dtype, type.shape, step);
    }
  }
}

REFX_DECL void check_pipeline_operands(const std::vector<PipeOperand>& ops, std::span<const std::int64_t> grid,
                                       SourceLoc loc) {
  const Graph& g = Tracer::current(loc).graph();
  for (const std::int64_t d : grid)
    if (d < 1)
      trace_error(loc, "{}: every grid extent must be >= 1, got grid ({})", pipeline_entry(), fmt::join(grid, ", "));
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const PipeOperand& op = ops[k];
    if (op.role == PipeRole::scratch) continue;
    const Shape shape = g.view_shape(op.hbm);
    if (op.buffers < 1 || (op.role == PipeRole::out && op.buffers > 2))
      trace_error(op.loc, "{}: operand {} ({}) asks for {} buffers; inputs take 1 or more, outputs 1 or 2",
                  pipeline_entry(), k, role_name(op.role), op.buffers);
    // An output block may pad past the array (its padding is dropped when
    // written back: paged attention's m and l); an input's would be read.
    for (std::size_t d = 0; d < op.block.size() && (op.role == PipeRole::in || op.by_element[d]); ++d)
      if (op.block[d] > shape[d])
        trace_error(op.loc, hint("give a block extent at most {} there (the whole dimension at most)", shape[d]),
                    "{}: operand {} ({}, shape {}, block [{}]): the block is larger than the array along "
                    "dimension {} ({} > {}), so every block there would be padded past the array's end",
                    pipeline_entry(), k, role_name(op.role), shape, fmt::join(op.block, ", "), d, op.block[d],
                    shape[d]);
    for (std::size_t s = 0; s < op.index.size(); ++s) {
      for (std::size_t d = 0; d < op.block.size(); ++d) {
        const DynIndex& b = op.index[s][d];
        const std::int64_t B = op.block[d], n = shape[d];
        if (op.bounded[d]) {  // bounded_slice(n): the slice starts inside the array
          if (b.is_static() && (b.constant < 0 || b.constant >= n))
            trace_error(op.loc,
                        "{}: operand {} ({}, shape {}, block [{}]): the index map's bounded slice along dimension {} "
                        "starts at {} at grid step ({}), outside the array's {} elements there",
                        pipeline_entry(), k, role_name(op.role), shape, fmt::join(op.block, ", "), d, b.constant,
                        fmt::join(grid_points(grid)[s], ", "), n);
          continue;
        }
        if (op.by_element[d] && B > 1) {  // element(n): the window [b, b + n) lies inside the array
          if (b.is_static() && (b.constant < 0 || b.constant + B > n))
            trace_error(op.loc,
                        "{}: operand {} ({}, shape {}, block [{}]): the index map gives element {} along "
                        "dimension {} (an element({}) dimension) at grid step ({}), so the block [{}, {}) lies outside "
                        "the array's {} elements there; return a start in [0, {}]",
                        pipeline_entry(), k, role_name(op.role), shape, fmt::join(op.block, ", "), b.constant, d, B,
                        fmt::join(grid_points(grid)[s], ", "), b.constant, b.constant + B, n, n - B);
          continue;
        }
        if (b.is_static()) {
          if (b.constant < 0 || b.constant * B >= n)
            trace_error(op.loc,
                        "{}: operand {} ({}, shape {}, block [{}]): the index map gives block index {} along "
                        "dimension {} at grid step ({}), outside the {} blocks there; return a block index in [0, {})",
                        pipeline_entry(), k, role_name(op.role), shape, fmt::join(op.block, ", "), b.constant, d,
                        fmt::join(grid_points(grid)[s], ", "), (n + B - 1) / B, (n + B - 1) / B);
        } else if (n % B != 0 && op.role == PipeRole::out) {
          trace_error(op.loc,
                      "{}: operand {} ({}, shape {}, block [{}]): the block does not divide dimension {} "
                      "and the output's block index there is traced, so the write-back of its partial last block "
                      "cannot be sized while tracing; use a block extent that divides {} or an integer block index",
                      pipeline_entry(), k, role_name(op.role), shape, fmt::join(op.block, ", "), d, n);
        }
      }
    }
  }
}

/// Whether block index `b` differs from `a` (the step before): known while
/// tracing when every dimension is known equal (integers, or one traced
/// value) or one is known to differ; otherwise `changed` becomes a traced
/// bool, true where some dimension differs at run time (Pallas' rule, for
/// indices read from scalar operands too).
inline BlockChange block_change(const std::vector<DynIndex>& a, const std::vector<DynIndex>& b, ValueId& changed,
                                SourceLoc loc) {
  const Graph& g = Tracer::current(loc).graph();
  std::vector<std::size_t> open;
  for (std::size_t d = 0; d < a.size(); ++d) {
    if (a[d].is_static() && b[d].is_static()) {
      if (a[d].constant != b[d].constant) return BlockChange::differs;
    } else if (a[d].is_static() || b[d].is_static() || a[d].value != b[d].value) {
      open.push_back(d);
    }
  }
  if (open.empty()) return BlockChange::same;
  changed = no_id;
  for (const std::size_t d : open) {
    DType t = DType::i64;
    if (a[d].is_static()) t = g.type(b[d].value).dtype;
    else if (b[d].is_static() || g.type(a[d].value).dtype == g.type(b[d].value).dtype) t = g.type(a[d].value).dtype;
    const ValueId ne = apply(prim::ne, {index_as(a[d], t, loc), index_as(b[d], t, loc)}, {}, loc);
    changed = changed == no_id ? ne : apply(prim::logical_or, {changed, ne}, {}, loc);
  }
  return BlockChange::run_time;
}

REFX_DECL PipelineSchedule::PipelineSchedule(std::vector<PipeOperand>& ops, std::size_t steps,
                                             refx::source_location loc)
    : ops_(ops), steps_(steps), loc_(loc) {
  for (PipeOperand& op : ops_) {
    op.event.assign(steps, 0);
    op.event_step.clear();
    op.change.assign(steps, BlockChange::same);
    op.changed.assign(steps, no_id);
    op.slot.assign(steps, DynIndex{0, -1});
    if (op.role == PipeRole::scratch) continue;
    // The window slot of step s is the number of block changes up to s,
    // modulo the ring: an integer while every change is known, traced from
    // the first one decided at run time on.
    DynIndex run{0, -1};
    for (std::size_t s = 0; s < steps; ++s) {
      op.change[s] = s == 0 ? BlockChange::differs : block_change(op.index[s - 1], op.index[s], op.changed[s], loc_);
      if (s > 0 && op.change[s] == BlockChange::differs) {
        if (run.is_static()) ++run.constant;
        else run = DynIndex{0, apply(prim::add, {run.value, constant<std::int32_t>(1, Shape{}, loc_)}, {}, loc_)};
      } else if (op.change[s] == BlockChange::run_time && op.buffers > 1) {
        const std::int64_t to_i32[] = {static_cast<std::int64_t>(DType::i32)};
        const ValueId one_if = apply(prim::cast, {op.changed[s]}, to_i32, loc_);
        run = DynIndex{0, apply(prim::add, {index_as(run, DType::i32, loc_), one_if}, {}, loc_)};
      }
      if (op.buffers == 1) op.slot[s] = DynIndex{0, -1};
      else if (run.is_static()) op.slot[s] = DynIndex{run.constant % op.buffers, -1};
      else
        op.slot[s] =
            DynIndex{0, apply(prim::rem, {run.value, constant<std::int32_t>(op.buffers, Shape{}, loc_)}, {}, loc_)};
      if (op.change[s] != BlockChange::same) op.event_step.push_back(s);
      op.event[s] = static_cast<int>(op.event_step.size()) - 1;
    }
    op.copies.assign(op.event_step.size(), std::nullopt);
    op.predicated.assign(op.event_step.size(), false);
    op.waited.assign(op.event_step.size(), false);
  }
}

REFX_DECL DynIndex PipelineSchedule::slot(std::size_t k, std::size_t s) const {
  const PipeOperand& op = ops_[k];
  if (op.role == PipeRole::scratch) return DynIndex{0, -1};
  return op.slot[s];
}

REFX_DECL int PipelineSchedule::copies(std::size_t k) const {
  int n = 0;
  for (const auto& c : ops_[k].copies) n += c.has_value();
  return n;
}

REFX_DECL int PipelineSchedule::run_time_copies(std::size_t k) const {
  int n = 0;
  for (std::size_t e = 0; e < ops_[k].copies.size(); ++e) n += ops_[k].copies[e].has_value() && ops_[k].predicated[e];
  return n;
}

/// Fills a window slot with NaN (floating point), the integer minimum, or
/// false before a partial block is copied into it, so that the padding past
/// the array's end reads the same in every mode (Pallas leaves it
/// unspecified; a stale earlier block would pass unnoticed into a max or a
/// sum), the values checked mode fills fresh scratch with.
inline void poison_slot(Tracer& t, ViewId slot_view, const std::vector<std::int64_t>& block, SourceLoc loc) {
  const ValueId fill = visit_dtype(t.graph().view_dtype(slot_view), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v =
        std::numeric_limits<T>::has_quiet_NaN ? std::numeric_limits<T>::quiet_NaN() : std::numeric_limits<T>::min();
    return constant<T>(v, Shape(std::span<const std::int64_t>(block)), loc);
  });
  const ValueId ins[] = {fill};
  const ViewId views[] = {slot_view};
  t.bind(prim::store, ins, views, {}, loc);
}

/// Fills operand `op`'s whole window with poison when a slot is longer than
/// its block (size_slots): the rows past the partial last block are rows no
/// copy writes.
inline void poison_tall_window(Tracer& t, const PipeOperand& op, SourceLoc loc) {
  if (!has_tall_slots(op)) return;
  std::vector<std::int64_t> dims{op.buffers};
  dims.insert(dims.end(), op.slot_block.begin(), op.slot_block.end());
  poison_slot(t, op.window, dims, loc);
}

/// The element start `v` of operand k's block along dimension d, checked at
/// run time against the array: a block index read from data that puts the
/// block past the array's end is an error naming the operand and `step`
/// (e.g. "step 5 of the grid"), before the copy's own bounds check would
/// name only the index.
inline ValueId checked_block_start(Tracer& t, const PipeOperand& op, std::size_t k, std::size_t d, ValueId v,
                                   const Shape& shape, const std::string& step, SourceLoc loc) {
  // A block that may be the partial last one (a longer slot) starts inside
  // the array; any other lies inside it whole.
  const std::int64_t size = op.slot_block[d] != op.block[d] ? 1 : op.block[d];
  const std::int64_t attrs[] = {
      static_cast<std::int64_t>(d), size, 1, shape[d],
      t.graph().add_string(fmt::format("{}: operand {} ({}, shape {}, block [{}]): the {} at {} puts the block "
                                       "outside the array",
                                       pipeline_entry(), k, role_name(op.role), shape, fmt::join(op.block, ", "),
                                       op.by_element[d] ? "element start" : "block index", step))};
  return t.bind1(prim::index_check, std::span<const ValueId>(&v, 1), {}, attrs, loc);
}

/// Starts the copy of operand k's event e: Hbm block -> window slot for an
/// input, window slot -> Hbm block for an output; only the block's part
/// inside the array moves (a partial last block).
REFX_DECL void PipelineSchedule::start(std::size_t k, int e) {
  PipeOperand& op = ops_[k];
  Tracer& t = Tracer::current(loc_);
  const Shape shape = t.graph().view_shape(op.hbm);
  const std::size_t first = op.event_step[static_cast<std::size_t>(e)];
  const std::vector<DynIndex>& b = op.index[first];
  // The window slot follows the block changes (traced where they are decided
  // at run time); the DMA semaphore follows the event number, which is known
  // while tracing: events in flight together are consecutive, so their
  // semaphores differ, and a predicated copy that does not run signals one
  // no other copy in flight uses.
  const DynIndex slot = op.slot[first];
  const std::int64_t sem_slot = e % op.buffers;
  // An input is fetched where its own step's block index changed; an output
  // is written back where the next event's index changed (or at the end).
  ValueId predicate = no_id;
  if (op.role == PipeRole::in && op.change[first] == BlockChange::run_time) predicate = op.changed[first];
  if (op.role == PipeRole::out && static_cast<std::size_t>(e) + 1 < op.event_step.size()) {
    const std::size_t next = op.event_step[static_cast<std::size_t>(e) + 1];
    if (op.change[next] == BlockChange::run_time) predicate = op.changed[next];
  }
  std::vector<IndexEntry> hbm, win;
  for (std::size_t d = 0; d < op.block.size(); ++d) {
    const std::int64_t B = op.block[d], scale = op.by_element[d] ? 1 : B;
    DynIndex start;
    std::int64_t size = B;
    if (b[d].is_static()) {
      start = DynIndex{b[d].constant * scale, -1};
      if (op.bounded[d]) start.constant = std::min(start.constant, shape[d] - B);  // B elements inside the array
      size = std::min(B, shape[d] - start.constant);
    } else {
      ValueId v = b[d].value;
      if (scale != 1) v = apply(prim::mul, {v, index_like(scale, v, loc_)});
      v = checked_block_start(t, op, k, d, v, shape, fmt::format("step {} of the grid", first), op.loc);
      start = DynIndex{0, clamp_to_last_block(op, d, v, shape)};
    }
    hbm.push_back(IndexEntry{dyn, start, size, 1});
    win.push_back(IndexEntry{dyn, DynIndex{0, -1}, size, 1});
  }
  const IndexEntry slot_entry[] = {IndexEntry{squeeze_dim, slot, 1, 1}};
  const IndexEntry sem_entry[] = {IndexEntry{squeeze_dim, DynIndex{sem_slot, -1}, 1, 1}};
  const ViewId slot_view = make_view(op.window, std::span<const IndexEntry>(slot_entry));
  const ViewId hbm_view = make_view(op.hbm, hbm), win_view = make_view(slot_view, win);
  bool partial = false;
  for (std::size_t d = 0; d < op.block.size(); ++d) partial = partial || win[d].size < op.block[d];
  // A predicated copy may not run; its slot then still holds the unchanged
  // block, which a fill would destroy.
  if (op.role == PipeRole::in && partial && predicate == no_id) poison_slot(t, slot_view, op.slot_block, loc_);
  const ViewId sem = make_view(op.sems, std::span<const IndexEntry>(sem_entry));
  const bool in = op.role == PipeRole::in;
  auto& c = op.copies[static_cast<std::size_t>(e)];
  c.emplace(in ? hbm_view : win_view, in ? win_view : hbm_view, sem, loc_);
  if (predicate == no_id) {
    c->start(loc_);
  } else {
    c->start_if(predicate, loc_);
    op.predicated[static_cast<std::size_t>(e)] = true;
  }
}

REFX_DECL void PipelineSchedule::wait(std::size_t k, int e) {
  PipeOperand& op = ops_[k];
  op.copies[static_cast<std::size_t>(e)]->wait(loc_);
  op.waited[static_cast<std::size_t>(e)] = true;
}

REFX_DECL void PipelineSchedule::prologue() {
  for (std::size_t k = 0; k < ops_.size(); ++k) {
    const PipeOperand& op = ops_[k];
    if (op.role != PipeRole::in) continue;
    poison_tall_window(Tracer::current(loc_), op, loc_);
    // Fetch the blocks of steps 0 .. n-2 (where the index changes), or with
    // lookahead the first n - 1 blocks.
    if (op.lookahead) {
      for (std::size_t e = 0; e + 1 < static_cast<std::size_t>(op.buffers) && e < op.event_step.size(); ++e)
        start(k, static_cast<int>(e));
      continue;
    }
    for (std::size_t s = 0; s + 1 < static_cast<std::size_t>(op.buffers) && s < steps_; ++s)
      if (op.event_step[static_cast<std::size_t>(op.event[s])] == s) start(k, op.event[s]);
  }
}

// The order within a step is chosen for the runtime, which keeps a copy on
// its device when the next op waits and, at a wait that would block, runs
// the device's kept copies itself (runtime/detail/launch_devices.hpp): so every start
// that should overlap the body comes after the step's waits and right
// before the body. Step s: wait for this step's new input blocks; start the
// write-back of the output runs that ended at step s - 1; start the fetch
// of step s + n - 1's input blocks; the body; wait for the write-backs the
// body overlapped. The copies that overlap step s's body are exactly the
// fetches of later steps' inputs and the write-backs of earlier steps'
// outputs, as in Pallas (pallas-pipelining.md B.2, which issues the fetch
// before the wait instead).
REFX_DECL void PipelineSchedule::before_body(std::size_t s) {
  for (std::size_t k = 0; k < ops_.size(); ++k) {
    const PipeOperand& op = ops_[k];
    if (op.role == PipeRole::in && op.buffers == 1 && op.event_step[static_cast<std::size_t>(op.event[s])] == s)
      start(k, op.event[s]);
  }
  for (std::size_t k = 0; k < ops_.size(); ++k) {
    const PipeOperand& op = ops_[k];
    if (op.role == PipeRole::in && op.event_step[static_cast<std::size_t>(op.event[s])] == s) wait(k, op.event[s]);
  }
  for (std::size_t k = 0; k < ops_.size(); ++k) {
    const PipeOperand& op = ops_[k];
    // The write-back of a run that ended at step s - 1 (deferred to here, past the waits).
    if (op.role == PipeRole::out && op.buffers > 1 && s > 0 && op.event[s] != op.event[s - 1])
      start(k, op.event[s - 1]);
  }
  for (std::size_t k = 0; k < ops_.size(); ++k) {
    const PipeOperand& op = ops_[k];
    if (op.role != PipeRole::in || op.buffers == 1) continue;
    if (op.lookahead) {
      // At the first step of block e, the slot of block e - 1 (at step 0 the
      // one slot the prologue left empty) is free: fetch block e + n - 1
      // into it, however many steps ahead it is used.
      const int e = op.event[s];
      const auto ahead = static_cast<std::size_t>(e + op.buffers - 1);
      if (op.event_step[static_cast<std::size_t>(e)] == s && ahead < op.event_step.size())
        start(k, static_cast<int>(ahead));
      continue;
    }
    // Prefetch step s + n - 1's block if it is a new one.
    const std::size_t ahead = s + static_cast<std::size_t>(op.buffers) - 1;
    if (ahead < steps_ && op.event_step[static_cast<std::size_t>(op.event[ahead])] == ahead) start(k, op.event[ahead]);
  }
}

REFX_DECL void PipelineSchedule::after_body(std::size_t s) {
  for (std::size_t k = 0; k < ops_.size(); ++k) {
    const PipeOperand& op = ops_[k];
    if (op.role != PipeRole::out) continue;
    const int e = op.event[s];
    const bool last_of_run = s + 1 == steps_ || op.event[s + 1] != e;
    if (op.buffers == 1 && last_of_run) {  // synchronous write-back
      start(k, e);
      wait(k, e);
    } else if (s + 1 == steps_) {
      start(k, e);  // the last run's write-back; the epilogue waits for it
    }
  }
  for (std::size_t k = 0; k < ops_.size(); ++k) {
    const PipeOperand& op = ops_[k];
    if (op.role != PipeRole::out || op.buffers == 1) continue;
    // At the first step of a run, the write-back of the run before it
    // (started before this body, overlapping it) must finish before its
    // slot is used again by the next run.
    const int e = op.event[s];
    if (op.event_step[static_cast<std::size_t>(e)] == s && e >= 1 && !op.waited[static_cast<std::size_t>(e - 1)])
      wait(k, e - 1);
  }
}

REFX_DECL void PipelineSchedule::epilogue() {
  for (std::size_t k = 0; k < ops_.size(); ++k) {
    const PipeOperand& op = ops_[k];
    if (op.role != PipeRole::out) continue;
    for (std::size_t e = 0; e < op.copies.size(); ++e)
      if (op.copies[e] && !op.waited[e]) wait(k, static_cast<int>(e));
  }
}
}  // namespace detail

namespace detail {
/// The grid point of the innermost pipeline body; `fn` names the caller
/// (program_id or num_programs) in the error when there is none.
inline const PipelineFrame& current_frame(const char* fn, std::size_t axis, refx::source_location loc) {
  const auto& f = pipeline_frames();
  if (f.empty() || axis >= f.back().dims.size())
    trace_error(loc, hint("call it inside an emit_pipeline body with an axis below the grid's rank"),
                "{}({}) outside a pipeline body, or past the grid's rank", fn, axis);
  return f.back();
}
}  // namespace detail

REFX_DECL std::int64_t program_id(std::size_t axis, refx::source_location loc) {
  const detail::PipelineFrame& f = detail::current_frame("program_id", axis, loc);
  if (f.point.empty())
    trace_error(
        loc,
        hint("read it as traced_program_id({}) (a Scalar<std::int32_t>: when(traced_program_id({}) == 0, ...)), "
             "or unroll the grid with grid(...).unrolled()",
             axis, axis),
        "program_id({}) in a rolled grid, whose grid indices are traced: it has no integer value while "
        "tracing",
        axis);
  return f.point[axis];
}
REFX_DECL Scalar<std::int32_t> traced_program_id(std::size_t axis, refx::source_location loc) {
  const detail::PipelineFrame& f = detail::current_frame("traced_program_id", axis, loc);
  if (f.point.empty()) return detail::wrap<std::int32_t, extents<>>(f.traced[axis]);
  return Scalar<std::int32_t>(static_cast<std::int32_t>(f.point[axis]), loc);
}
REFX_DECL std::int64_t num_programs(std::size_t axis, refx::source_location loc) {
  const std::int64_t n = detail::current_frame("num_programs", axis, loc).dims[axis];
  if (n < 0)  // an extent read from data (pipeline.hpp, DynamicExtent)
    trace_error(loc, hint("pass the extent to the body as a scalar operand and read it there"),
                "num_programs({}) of a grid dimension whose extent is read from data: it has no integer value "
                "while tracing",
                axis);
  return n;
}

}  // namespace refx
