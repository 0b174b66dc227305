#pragma once
// Rolled grids: a pipeline whose grid is traced as one fori_loop (a graph
// whose size does not depend on the step count). The loop's index is the
// step; its grid point is derived by div / mod over the grid's extents, so
// every grid index, every block index, every window slot and every DMA
// semaphore index is a traced scalar, and every copy is a dma_start
// predicated on the run-time comparison of consecutive block indices
// (Pallas' rule, as for scalar prefetch). The loop carries, per operand, its
// window slot: the number of block changes so far modulo the ring. Before the loop: the first fetches of each input
// (steps 0 .. n-2); in the loop body, step s: wait for s's input blocks, start the write-back of the output run that
// ended at s - 1, fetch step s + n - 1's blocks, the body, wait for the write-back; after the loop: the last
// write-back, and the waits for the fetches the last steps issued past the grid's end (clamped to the last step, whose
// block does not change: they move nothing, but signal their semaphores, so every start still has its wait). Users
// never name these; pipeline.hpp includes this header (definitions in pipeline/rolled_schedule.hpp).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <refx/config.hpp>
#include <refx/pipeline/cores.hpp>
#include <refx/pipeline/operands.hpp>
#include <refx/pipeline/report.hpp>
#include <refx/trace/control_flow.hpp>
#include <refx/trace/value.hpp>

namespace refx::detail {

/// Whether operand A can be part of a rolled grid of rank R: a scratch
/// operand, or one whose index map takes traced grid indices.
template <class A, class Scalars, std::size_t R>
constexpr bool rolls() {
  if constexpr (requires { std::declval<A>().spec; }) {
    using Map = decltype(std::declval<A>().spec.map);
    return map_takes_traced<Map, Scalars, std::make_index_sequence<R>>::value;
  } else {
    return true;
  }
}

/// Operand `a` of a rolled grid: what describe() records, with the index map
/// kept (type-erased) to be called at traced grid points.
template <std::size_t R, class A, class Scalars>
void describe_rolled(const A& a, PipeOperand& op, const Scalars& scalars, std::size_t k) {
  if constexpr (requires { a.spec; }) {
    using Spec = std::remove_cvref_t<decltype(a.spec)>;
    describe_block_operand(a, op);
    op.traced.assign(op.block.size(), true);  // a rolled grid's indices are traced
    if constexpr (rolls<A, Scalars, R>()) {
      op.map_at = [map = a.spec.map, scalars, k, role = op.role, loc = op.loc](std::span<const ValueId> p) {
        // A traced index into a scalar operand is checked at run time, its
        // error naming the operand (the step is traced: index_map_reads).
        const std::vector<ValueId> scalar_refs = std::apply(
            [](const auto&... sc) { return std::vector<ValueId>{Tracer::current().graph().view(sc.view()).ref...}; },
            scalars);
        const IndexMapCall call{k, role, {}, scalar_refs};
        const SmemIndexContext context{&index_map_reads, &call};
        const std::size_t ops_before = Tracer::current().graph().num_ops();
        std::vector<DynIndex> index;
        {
          const SmemIndexContextScope checked(context);
          index = [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>, std::index_sequence<J...>) {
            return block_indices<Spec::rank>(
                map(wrap<std::int32_t, extents<>>(p[I])..., std::get<J>(scalars)...), Spec::block_extents,
                [&] {
                  return fmt::format("{}: operand {} ({}) at a step of the rolled grid", pipeline_entry(), k,
                                     role_name(role));
                },
                loc);
          }
          (std::make_index_sequence<R>{}, std::make_index_sequence<std::tuple_size_v<Scalars>>{});
        }
        check_index_map_memory(call, ops_before, loc);
        return index;
      };
    }
  } else {
    op.role = PipeRole::scratch;
  }
}

/// Whether a grid over `dims` with operands `ops` (describe_rolled) is
/// rolled: asked for (`asked`; a grid that cannot roll is then a trace-time
/// error naming why), or more than rolled_grid_threshold steps, every block
/// dividing its operand.
REFX_DECL bool roll_grid(const std::vector<PipeOperand>& ops, std::span<const std::int64_t> dims, bool asked,
                         SourceLoc loc = {});

/// `extent` (a traced integer) checked at run time to lie in [0, bound]: the
/// extent of grid dimension `d` read from data; `entry` names the pipeline.
REFX_DECL ValueId checked_extent(ValueId extent, std::size_t d, std::int64_t bound, const char* entry,
                                 refx::source_location loc);

/// Traces a rolled grid (see the top of this header).
class RolledSchedule {
 public:
  /// The body of one step: the traced grid point, each operand's window
  /// slot and block index.
  using StepBody = std::function<void(std::span<const ValueId> point, std::span<const DynIndex> slots,
                                      std::span<const std::vector<DynIndex>> index)>;
  /// Over steps [range.first, range.first + range.count) of the grid `dims`
  /// (this core's share; pipeline/cores.hpp), count >= 1.
  /// `extents`: per dimension, its extent traced (known only at run time;
  /// `dims` holds its bound) or no_id; empty when all are static.
  REFX_DECL RolledSchedule(std::vector<PipeOperand>& ops, std::span<const std::int64_t> dims, StepRange range,
                           refx::source_location loc, std::span<const ValueId> extents = {});
  /// Records the prologue, the loop (calling `body` once) and the epilogue.
  REFX_DECL PipelineReport trace(const StepBody& body);

 private:
  REFX_DECL ValueId i32(std::int64_t v) const;
  REFX_DECL ValueId op2(const Primitive& p, ValueId a, ValueId b) const;
  REFX_DECL std::vector<ValueId> point_of(ValueId step) const;
  /// `step` kept in the grid: raised to 0 (`below`), lowered to the last step (`above`).
  REFX_DECL ValueId clamped(ValueId step, bool below, bool above) const;
  REFX_DECL void hoist_constants();
  REFX_DECL std::vector<DynIndex> index_at(std::size_t k, ValueId step) const;
  REFX_DECL ValueId changed(std::size_t k, ValueId before, ValueId step) const;
  REFX_DECL AsyncCopy copy(std::size_t k, const std::vector<DynIndex>& block, DynIndex slot, ValueId sem) const;
  REFX_DECL void fetch_ahead(std::size_t k, ValueId step, ValueId run, std::int64_t ahead);
  /// The loop's step count and its last step (traced when an extent is).
  REFX_DECL ValueId count() const;
  REFX_DECL ValueId last() const;
  REFX_DECL void trace_steps(const StepBody& body);
  std::vector<PipeOperand>& ops_;
  std::vector<std::int64_t> dims_;
  std::int64_t grid_steps_ = 1;  ///< the whole grid's
  std::int64_t first_ = 0;       ///< the grid step of the loop's step 0
  std::int64_t steps_ = 1;       ///< the loop's
  refx::source_location loc_;
  std::vector<std::pair<std::int64_t, ValueId>> constants_;  ///< made before the loop
  ValueId no_ = no_id, yes_ = no_id;                         ///< bool constants, made before the loop
  std::vector<ValueId> extents_;  ///< per dimension: traced, or no_id (all no_id: a static grid)
  bool dynamic_ = false;
  ValueId count_ = no_id, last_ = no_id;  ///< traced step count and last step, when dynamic
  std::vector<ValueId> strides_;          ///< traced strides of the grid point, when dynamic
};

}  // namespace refx::detail
