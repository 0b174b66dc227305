#pragma once
// The out-of-line definitions of rolled grids (declared in
// pipeline/rolled.hpp): whether a grid rolls, and the prologue, loop and
// epilogue of a rolled pipeline. Part of pipeline.hpp, which includes it at
// its end when REFX_DEFINITIONS is set (after pipeline/schedule.hpp, whose
// helpers it uses), so it includes no refx header back.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <span>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace refx::detail {

REFX_DECL bool roll_grid(const std::vector<PipeOperand>& ops, std::span<const std::int64_t> dims, bool asked,
                         SourceLoc loc) {
  std::int64_t steps = 1;
  for (const std::int64_t d : dims) {
    if (d < 1) return asked;  // RolledSchedule / check_pipeline_operands report it
    steps = steps > std::numeric_limits<std::int32_t>::max() / d ? std::numeric_limits<std::int64_t>::max() : steps * d;
  }
  if (!asked && steps <= rolled_grid_threshold) return false;
  if (steps > std::numeric_limits<std::int32_t>::max()) {
    if (!asked) return false;
    trace_error(loc, hint("split the work over several pipelines, or over a collective's devices"),
                "{}: a rolled grid ({}) counts its steps in an int32 loop index; it has more than {} steps",
                pipeline_entry(), fmt::join(dims, ", "), std::numeric_limits<std::int32_t>::max());
  }
  const Graph& g = Tracer::current(loc).graph();
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const PipeOperand& op = ops[k];
    if (op.role == PipeRole::scratch) continue;
    const Shape shape = g.view_shape(op.hbm);
    for (std::size_t d = 0; d < op.block.size(); ++d) {
      if (op.block[d] > shape[d] || shape[d] % op.block[d] == 0 || op.by_element[d] || op.role == PipeRole::in)
        continue;  // a larger block: reported later; an input's partial block: a longer slot (size_slots)
      if (!asked) return false;
      trace_error(op.loc,
                  hint("unroll the grid (grid(...).unrolled()), or use a block extent that divides {}", shape[d]),
                  "{}: operand {} ({}, shape {}, block [{}]) in a rolled grid: the block does not divide "
                  "dimension {}, and a rolled grid's block indices are traced, so the write-back of the output's "
                  "partial last block cannot be sized while tracing",
                  pipeline_entry(), k, role_name(op.role), shape, fmt::join(op.block, ", "), d);
    }
  }
  return true;
}

REFX_DECL ValueId checked_extent(ValueId extent, std::size_t d, std::int64_t bound, const char* entry,
                                 refx::source_location loc) {
  Tracer& t = Tracer::current(loc);
  const std::int64_t attrs[] = {
      0, 1, 1, bound + 1,
      t.graph().add_string(
          fmt::format("{}: the extent of grid dimension {}, read from data, must lie in [0, {}]", entry, d, bound))};
  return t.bind1(prim::index_check, std::span<const ValueId>(&extent, 1), {}, attrs, loc);
}

REFX_DECL RolledSchedule::RolledSchedule(std::vector<PipeOperand>& ops, std::span<const std::int64_t> dims,
                                         StepRange range, refx::source_location loc, std::span<const ValueId> extents)
    : ops_(ops),
      dims_(dims.begin(), dims.end()),
      first_(range.first),
      steps_(range.count),
      loc_(loc),
      extents_(extents.begin(), extents.end()) {
  check_pipeline_operands(ops_, dims, loc_);
  for (const std::int64_t d : dims_) grid_steps_ *= d;
  extents_.resize(dims_.size(), no_id);
  dynamic_ = std::any_of(extents_.begin(), extents_.end(), [](ValueId v) { return v != no_id; });
}

REFX_DECL ValueId RolledSchedule::count() const { return dynamic_ ? count_ : i32(steps_); }
REFX_DECL ValueId RolledSchedule::last() const { return dynamic_ ? last_ : i32(steps_ - 1); }

REFX_DECL ValueId RolledSchedule::i32(std::int64_t v) const {
  // The loop body's constants are made before the loop (hoist_constants),
  // so that no iteration re-runs them.
  for (const auto& [value, id] : constants_)
    if (value == v) return id;
  return constant<std::int32_t>(static_cast<std::int32_t>(v), Shape{}, loc_);
}

REFX_DECL void RolledSchedule::hoist_constants() {
  std::vector<std::int64_t> values{-1, 0, 1, 2, steps_, steps_ - 1, first_};
  for (const std::int64_t d : dims_) values.push_back(d);
  for (std::int64_t stride = grid_steps_, d = 0; d < static_cast<std::int64_t>(dims_.size()); ++d)
    values.push_back(stride /= dims_[static_cast<std::size_t>(d)]);
  for (const PipeOperand& op : ops_) {
    for (std::int64_t j = 0; j <= op.buffers; ++j) values.push_back(j);
    for (const std::int64_t b : op.block) values.push_back(b);
  }
  for (const std::int64_t v : values)
    if (std::none_of(constants_.begin(), constants_.end(), [&](const auto& c) { return c.first == v; }))
      constants_.emplace_back(v, constant<std::int32_t>(static_cast<std::int32_t>(v), Shape{}, loc_));
  no_ = constant<bool>(false, Shape{}, loc_);
  yes_ = constant<bool>(true, Shape{}, loc_);
}
REFX_DECL ValueId RolledSchedule::op2(const Primitive& p, ValueId a, ValueId b) const {
  return apply(p, {a, b}, {}, loc_);
}

REFX_DECL std::vector<ValueId> RolledSchedule::point_of(ValueId step) const {
  if (first_ != 0) step = op2(prim::add, step, i32(first_));  // the loop's step -> the grid's
  std::vector<ValueId> p;
  if (dynamic_) {  // strides and extents traced (made before the loop)
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      ValueId i = d + 1 == dims_.size() ? step : op2(prim::div, step, strides_[d]);
      if (d > 0) i = op2(prim::rem, i, extents_[d] != no_id ? extents_[d] : i32(dims_[d]));
      p.push_back(i);
    }
    return p;
  }
  std::int64_t stride = grid_steps_;
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    stride /= dims_[d];
    ValueId i = stride == 1 ? step : op2(prim::div, step, i32(stride));
    if (d > 0) i = op2(prim::rem, i, i32(dims_[d]));
    p.push_back(i);
  }
  return p;
}

REFX_DECL ValueId RolledSchedule::clamped(ValueId step, bool below, bool above) const {
  if (below) step = op2(prim::max, step, i32(0));
  if (above) step = op2(prim::min, step, last());
  return step;
}

REFX_DECL std::vector<DynIndex> RolledSchedule::index_at(std::size_t k, ValueId step) const {
  return ops_[k].map_at(point_of(step));
}

REFX_DECL ValueId RolledSchedule::changed(std::size_t k, ValueId before, ValueId step) const {
  ValueId out = no_id;
  switch (block_change(index_at(k, before), index_at(k, step), out, loc_)) {
    case BlockChange::same: return no_ != no_id ? no_ : constant<bool>(false, Shape{}, loc_);
    case BlockChange::differs: return yes_ != no_id ? yes_ : constant<bool>(true, Shape{}, loc_);
    case BlockChange::run_time: break;
  }
  return out;
}

REFX_DECL AsyncCopy RolledSchedule::copy(std::size_t k, const std::vector<DynIndex>& b, DynIndex slot,
                                         ValueId sem) const {
  const PipeOperand& op = ops_[k];
  Tracer& t = Tracer::current(loc_);
  const Shape shape = t.graph().view_shape(op.hbm);
  std::vector<IndexEntry> hbm, win;
  for (std::size_t d = 0; d < op.block.size(); ++d) {
    const std::int64_t B = op.block[d], scale = op.by_element[d] ? 1 : B;
    DynIndex start{b[d].constant * scale, -1};
    if (!b[d].is_static()) {
      ValueId v = b[d].value;
      if (scale != 1 && t.graph().type(v).dtype == DType::i32) {
        v = op2(prim::mul, v, i32(scale));
      } else if (scale != 1) {
        v = op2(prim::mul, v, index_like(scale, v, loc_));
      }
      v = checked_block_start(t, op, k, d, v, shape, "a step of the rolled grid", op.loc);
      start = DynIndex{0, clamp_to_last_block(op, d, v, shape)};
    }
    hbm.push_back(IndexEntry{dyn, start, B, 1});
    win.push_back(IndexEntry{dyn, DynIndex{0, -1}, B, 1});
  }
  const IndexEntry slot_entry[] = {IndexEntry{squeeze_dim, slot, 1, 1}};
  const IndexEntry sem_entry[] = {IndexEntry{squeeze_dim, DynIndex{0, sem}, 1, 1}};
  const ViewId slot_view = make_view(op.window, std::span<const IndexEntry>(slot_entry));
  const ViewId hbm_view = make_view(op.hbm, hbm), win_view = make_view(slot_view, win);
  const ViewId sem_view = make_view(op.sems, std::span<const IndexEntry>(sem_entry));
  const bool in = op.role == PipeRole::in;
  return AsyncCopy(in ? hbm_view : win_view, in ? win_view : hbm_view, sem_view, loc_);
}

/// Starts the fetch of step `step + ahead` (slot: the window slot at
/// `step`), predicated on its block changing; its slot counts the changes
/// after `step`. A step past the grid's end is clamped to the last one, so
/// its block never changes: the fetch moves nothing (but signals).
REFX_DECL void RolledSchedule::fetch_ahead(std::size_t k, ValueId step, ValueId slot, std::int64_t ahead) {
  const PipeOperand& op = ops_[k];
  const std::int64_t to_i32[] = {static_cast<std::int64_t>(DType::i32)};
  ValueId raw = no_id;
  for (std::int64_t j = 1; j <= ahead; ++j) {
    const ValueId at = op2(prim::add, step, i32(j));
    // `step` is in the grid, and later steps are not below it.
    const ValueId before = j == 1 ? step : clamped(op2(prim::add, step, i32(j - 1)), false, true);
    raw = changed(k, before, clamped(at, false, true));
    slot = op2(prim::add, slot, apply(prim::cast, {raw}, to_i32, loc_));
  }
  const ValueId at = op2(prim::add, step, i32(ahead));
  copy(k, index_at(k, clamped(at, false, true)), DynIndex{0, op2(prim::rem, slot, i32(op.buffers))},
       op2(prim::rem, at, i32(op.buffers)))
      .start_if(raw, loc_);
}

REFX_DECL PipelineReport RolledSchedule::trace(const StepBody& body) {
  hoist_constants();
  if (dynamic_) {
    // The step count and the grid point's strides, traced; no step at all
    // when an extent is 0 (nothing fetched, nothing written back).
    strides_.assign(dims_.size(), no_id);
    ValueId run = i32(1);
    for (std::size_t d = dims_.size(); d-- > 0;) {
      strides_[d] = run;
      run = op2(prim::mul, run, extents_[d] != no_id ? extents_[d] : i32(dims_[d]));
    }
    count_ = run;
    last_ = op2(prim::sub, count_, i32(1));
    when(
        wrap<bool, extents<>>(op2(prim::lt, i32(0), count_)), [&] { trace_steps(body); }, loc_);
  } else {
    trace_steps(body);
  }
  PipelineReport report;
  report.steps = static_cast<std::size_t>(steps_);
  report.rolled = true;
  for (const PipeOperand& op : ops_) {
    const int n = op.role == PipeRole::scratch ? 0 : static_cast<int>(steps_);
    report.copies.push_back(n);
    report.run_time_copies.push_back(n);
  }
  return report;
}

REFX_DECL void RolledSchedule::trace_steps(const StepBody& body) {
  Tracer& t = Tracer::current(loc_);
  const std::int64_t to_i32[] = {static_cast<std::int64_t>(DType::i32)};
  const auto as_i32 = [&](ValueId b) { return apply(prim::cast, {b}, to_i32, loc_); };
  std::vector<std::size_t> blocks;  // the operands with blocks (not scratch)
  for (std::size_t k = 0; k < ops_.size(); ++k)
    if (ops_[k].role != PipeRole::scratch) blocks.push_back(k);

  // Prologue: each input's first n - 1 fetches (steps 0 .. n-2; past the
  // grid's end they move nothing).
  for (const std::size_t k : blocks) {
    const PipeOperand& op = ops_[k];
    if (op.role == PipeRole::in) poison_tall_window(t, op, loc_);
    if (op.role != PipeRole::in || op.buffers == 1) continue;
    copy(k, index_at(k, i32(0)), DynIndex{0, -1}, i32(0)).start(loc_);
    for (std::int64_t j = 1; j + 1 < op.buffers; ++j) fetch_ahead(k, i32(0), i32(0), j);
  }

  // The loop: one step per iteration, carrying each operand's window slot
  // at the step before (0 before step 0).
  t.note(loc_);
  std::vector<ValueId> ins{i32(0), count()};
  for (std::size_t i = 0; i < blocks.size(); ++i) ins.push_back(i32(0));
  const BlockId loop_block = t.open_block();
  std::vector<ValueId> out;
  {
    const ValueId s = t.add_param(t.graph().type(ins[0]), 0);
    const LoopBody open_loop(t, loop_block, s);
    std::vector<ValueId> carry;
    for (std::size_t i = 0; i < blocks.size(); ++i) carry.push_back(t.add_param(t.graph().type(ins[2 + i]), 0));
    const std::vector<ValueId> point = point_of(s);
    const ValueId prev = clamped(op2(prim::sub, s, i32(1)), true, false);
    std::vector<DynIndex> slots(ops_.size(), DynIndex{0, -1});
    std::vector<ValueId> raw(ops_.size(), no_id), next_carry(ops_.size(), no_id);
    std::vector<std::vector<DynIndex>> index(ops_.size());
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const std::size_t k = blocks[i];
      index[k] = index_at(k, s);
      raw[k] = changed(k, prev, s);
      // At step 0 `prev` is step 0: no change, slot 0.
      next_carry[k] = carry[i];
      if (ops_[k].buffers > 1) {
        next_carry[k] = op2(prim::rem, op2(prim::add, carry[i], as_i32(raw[k])), i32(ops_[k].buffers));
        slots[k] = DynIndex{0, next_carry[k]};
      }
    }
    // Wait for this step's input blocks (a single buffer is fetched here).
    for (const std::size_t k : blocks) {
      const PipeOperand& op = ops_[k];
      if (op.role != PipeRole::in) continue;
      if (op.buffers == 1) {
        const AsyncCopy c = copy(k, index[k], slots[k], i32(0));
        c.start_if(op2(prim::logical_or, op2(prim::eq, s, i32(0)), raw[k]), loc_);
        c.wait(loc_);
      } else {
        copy(k, index[k], slots[k], op2(prim::rem, s, i32(op.buffers))).wait(loc_);
      }
    }
    // The write-back of the output run that ended at step s - 1.
    std::vector<std::optional<AsyncCopy>> write_back(ops_.size());
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const std::size_t k = blocks[i];
      if (ops_[k].role != PipeRole::out || ops_[k].buffers == 1) continue;
      // At step 0 it does not run (no change), and names slot 0 harmlessly.
      write_back[k].emplace(
          copy(k, index_at(k, prev), DynIndex{0, carry[i]}, op2(prim::rem, op2(prim::add, s, i32(1)), i32(2))));
      write_back[k]->start_if(raw[k], loc_);
    }
    // The fetch of step s + n - 1.
    for (const std::size_t k : blocks)
      if (ops_[k].role == PipeRole::in && ops_[k].buffers > 1) fetch_ahead(k, s, next_carry[k], ops_[k].buffers - 1);
    body(point, slots, index);
    for (const std::size_t k : blocks) {
      const PipeOperand& op = ops_[k];
      if (op.role != PipeRole::out) continue;
      if (op.buffers > 1) {
        write_back[k]->wait(loc_);
      } else {  // synchronous, at the last step of a run
        const ValueId next = clamped(op2(prim::add, s, i32(1)), false, true);
        const ValueId last_of_run = op2(prim::logical_or, op2(prim::eq, s, last()), changed(k, s, next));
        const AsyncCopy c = copy(k, index[k], slots[k], i32(0));
        c.start_if(last_of_run, loc_);
        c.wait(loc_);
      }
    }
    for (const std::size_t k : blocks) out.push_back(next_carry[k]);
  }
  t.graph().mutable_block(loop_block).results = out;
  t.close_block(loop_block);
  const auto types = types_of<void>(t.graph(), out);
  const BlockId bodies[] = {loop_block};
  // A copy: the span points into the graph's pool, which the epilogue's ops grow.
  const std::span<const ValueId> results = t.record(prim::fori_loop, ins, {}, {}, types, {}, bodies, loc_);
  const std::vector<ValueId> final_slot(results.begin(), results.end());

  // Epilogue: the last output run's write-back; the waits for the fetches
  // issued past the grid's end (moving nothing, they signalled).
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::size_t k = blocks[i];
    const PipeOperand& op = ops_[k];
    if (op.role == PipeRole::out && op.buffers > 1) {
      const AsyncCopy c = copy(k, index_at(k, last()), DynIndex{0, final_slot[i]},
                               dynamic_ ? op2(prim::rem, last(), i32(2)) : i32((steps_ - 1) % 2));
      c.start(loc_);
      c.wait(loc_);
    } else if (op.role == PipeRole::in) {
      for (std::int64_t j = 0; j + 1 < op.buffers; ++j)
        copy(k, index_at(k, last()), DynIndex{0, -1},
             dynamic_ ? op2(prim::rem, op2(prim::add, count(), i32(j)), i32(op.buffers))
                      : i32((steps_ + j) % op.buffers))
            .wait(loc_);
    }
  }
}

}  // namespace refx::detail
