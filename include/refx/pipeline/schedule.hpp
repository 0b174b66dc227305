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

inline const char* role_name(PipeRole r) {
  return r == PipeRole::in ? "input" : r == PipeRole::out ? "output" : "scratch";
}

REFX_DECL void check_pipeline_operands(const std::vector<PipeOperand>& ops, std::span<const std::int64_t> grid,
                                       SourceLoc loc) {
  const Graph& g = Tracer::current(loc).graph();
  for (const std::int64_t d : grid)
    if (d < 1) trace_error(loc, "emit_pipeline: every grid extent must be >= 1, got grid ({})", fmt::join(grid, ", "));
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const PipeOperand& op = ops[k];
    if (op.role == PipeRole::scratch) continue;
    const Shape shape = g.view_shape(op.hbm);
    if (op.buffers < 1 || (op.role == PipeRole::out && op.buffers > 2))
      trace_error(loc, "emit_pipeline: operand {} ({}) asks for {} buffers; inputs take 1 or more, outputs 1 or 2", k,
                  role_name(op.role), op.buffers);
    for (std::size_t d = 0; d < op.block.size(); ++d)
      if (op.block[d] > shape[d])
        trace_error(op.loc, hint("give a block extent at most {} there (the whole dimension at most)", shape[d]),
                    "emit_pipeline: operand {} ({}, shape {}, block [{}]): the block is larger than the array along "
                    "dimension {} ({} > {}), so every block there would be padded past the array's end",
                    k, role_name(op.role), shape, fmt::join(op.block, ", "), d, op.block[d], shape[d]);
    for (std::size_t s = 0; s < op.index.size(); ++s) {
      for (std::size_t d = 0; d < op.block.size(); ++d) {
        const DynIndex& b = op.index[s][d];
        const std::int64_t B = op.block[d], n = shape[d];
        if (b.is_static()) {
          if (b.constant < 0 || b.constant * B >= n)
            trace_error(
                loc,
                "emit_pipeline: operand {} ({}, shape {}, block [{}]): the index map gives block index {} along "
                "dimension {} at grid step ({}), outside the {} blocks there; return a block index in [0, {})",
                k, role_name(op.role), shape, fmt::join(op.block, ", "), b.constant, d,
                fmt::join(grid_points(grid)[s], ", "), (n + B - 1) / B, (n + B - 1) / B);
        } else if (n % B != 0) {
          trace_error(loc,
                      "emit_pipeline: operand {} ({}, shape {}, block [{}]): the block does not divide dimension {} "
                      "and its block index there is traced, so the partial last block cannot be sized while tracing; "
                      "use a block extent that divides {} or an integer block index",
                      k, role_name(op.role), shape, fmt::join(op.block, ", "), d, n);
        }
      }
    }
  }
}

inline bool same_block(const std::vector<DynIndex>& a, const std::vector<DynIndex>& b) {
  for (std::size_t d = 0; d < a.size(); ++d) {
    if (a[d].is_static() != b[d].is_static()) return false;
    if (a[d].is_static() ? a[d].constant != b[d].constant : a[d].value != b[d].value) return false;
  }
  return true;
}

REFX_DECL PipelineSchedule::PipelineSchedule(std::vector<PipeOperand>& ops, std::size_t steps,
                                             refx::source_location loc)
    : ops_(ops), steps_(steps), loc_(loc) {
  for (PipeOperand& op : ops_) {
    op.event.assign(steps, 0);
    op.event_step.clear();
    if (op.role == PipeRole::scratch) continue;
    for (std::size_t s = 0; s < steps; ++s) {
      if (s == 0 || !same_block(op.index[s], op.index[s - 1])) op.event_step.push_back(s);
      op.event[s] = static_cast<int>(op.event_step.size()) - 1;
    }
    op.copies.assign(op.event_step.size(), std::nullopt);
    op.waited.assign(op.event_step.size(), false);
  }
}

REFX_DECL std::int64_t PipelineSchedule::slot(std::size_t k, std::size_t s) const {
  const PipeOperand& op = ops_[k];
  if (op.role == PipeRole::scratch) return 0;
  return op.event[s] % op.buffers;
}

REFX_DECL int PipelineSchedule::copies(std::size_t k) const {
  int n = 0;
  for (const auto& c : ops_[k].copies) n += c.has_value();
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

/// Starts the copy of operand k's event e: Hbm block -> window slot for an
/// input, window slot -> Hbm block for an output; only the block's part
/// inside the array moves (a partial last block).
REFX_DECL void PipelineSchedule::start(std::size_t k, int e) {
  PipeOperand& op = ops_[k];
  Tracer& t = Tracer::current(loc_);
  const Shape shape = t.graph().view_shape(op.hbm);
  const std::vector<DynIndex>& b = op.index[op.event_step[static_cast<std::size_t>(e)]];
  const std::int64_t slot = e % op.buffers;
  std::vector<IndexEntry> hbm, win;
  for (std::size_t d = 0; d < op.block.size(); ++d) {
    const std::int64_t B = op.block[d];
    DynIndex start;
    std::int64_t size = B;
    if (b[d].is_static()) {
      start = DynIndex{b[d].constant * B, -1};
      size = std::min(B, shape[d] - start.constant);
    } else {
      ValueId v = b[d].value;
      if (B != 1) {
        const ValueId c = visit_dtype(t.graph().type(v).dtype, [&](auto tag) {
          using I = typename decltype(tag)::type;
          if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>)
            return constant<I>(static_cast<I>(B), Shape{});
          else return v;
        });
        v = apply(prim::mul, {v, c});
      }
      start = DynIndex{0, v};
    }
    hbm.push_back(IndexEntry{dyn, start, size, 1});
    win.push_back(IndexEntry{dyn, DynIndex{0, -1}, size, 1});
  }
  const IndexEntry slot_entry[] = {IndexEntry{squeeze_dim, DynIndex{slot, -1}, 1, 1}};
  const ViewId slot_view = make_view(op.window, std::span<const IndexEntry>(slot_entry));
  const ViewId hbm_view = make_view(op.hbm, hbm), win_view = make_view(slot_view, win);
  bool partial = false;
  for (std::size_t d = 0; d < op.block.size(); ++d) partial = partial || win[d].size < op.block[d];
  if (op.role == PipeRole::in && partial) poison_slot(t, slot_view, op.block, loc_);
  const ViewId sem = make_view(op.sems, std::span<const IndexEntry>(slot_entry));
  const bool in = op.role == PipeRole::in;
  auto& c = op.copies[static_cast<std::size_t>(e)];
  c.emplace(in ? hbm_view : win_view, in ? win_view : hbm_view, sem, loc_);
  c->start(loc_);
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
    // Fetch the blocks of steps 0 .. n-2 (where the index changes).
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
  if (f.empty() || axis >= f.back().point.size())
    trace_error(loc, hint("call it inside an emit_pipeline body with an axis below the grid's rank"),
                "{}({}) outside a pipeline body, or past the grid's rank", fn, axis);
  return f.back();
}
}  // namespace detail

REFX_DECL std::int64_t program_id(std::size_t axis, refx::source_location loc) {
  return detail::current_frame("program_id", axis, loc).point[axis];
}
REFX_DECL std::int64_t num_programs(std::size_t axis, refx::source_location loc) {
  return detail::current_frame("num_programs", axis, loc).dims[axis];
}

}  // namespace refx
