#pragma once
// Pallas-style pipelining: a grid, a BlockSpec per Hbm operand, and a body
// over Vmem blocks (docs/tutorial.md, "Pipelining blocks through Vmem").
//
//   emit_pipeline(grid(4, 2), body)(in(x, block<8, 128>(map)), out(z, block<8, 128>(map)), scratch<VmemRef<float, 8,
//   128>>());
//     inside a kernel: copies block after block of x into a ring of Vmem
//     slots, runs body(x_block, z_block, acc) on each, copies z's blocks back.
//   pipeline_kernel<SmemRef<const int32_t, S>..., HbmRef<const float, N>, HbmRef<float, N>>(grid, body, specs...,
//   scratch<H>()...)
//     the kernel itself (pallas_call): a kernel over Hbm Refs whose body sees blocks, with scalar
//     operands (Smem, first) that index maps and body read, and scratch operands.
//
// The pipeline is generated with the public trace primitives (run_scoped
// windows and DMA semaphores, make_async_copy, start / wait), so the verifier
// checks it like user code. The grid is unrolled at trace time
// (docs/architecture.md, departure 12), or, above rolled_grid_threshold
// steps or when asked (grid(...).rolled()), traced as one loop whose copies
// are all decided at run time (pipeline/rolled.hpp). Copies follow Pallas' rules: an
// input is fetched only when its block index changes between consecutive
// steps, an output is written back only when its block index is about to
// change or the grid ends. Block indices are integers or traced scalars:
// integers, and one traced value (e.g. axis_index) met twice, are compared
// while tracing; other traced indices (e.g. read from scalar operands) are
// compared at run time, and the copy is a predicated dma_start that moves
// nothing where the block did not change (pipeline/schedule.hpp).
// program_id(axis) / num_programs(axis) give the current step's grid point
// inside the body (integers in an unrolled grid; traced_program_id(axis) is
// the traced form, the only one in a rolled grid). The Executable
// keeps each pipeline's PipelineReport (Executable::pipeline_report).

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <refx/core/source_location.hpp>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <refx/config.hpp>
#include <refx/pipeline/body_check.hpp>
#include <refx/pipeline/cores.hpp>
#include <refx/pipeline/kernel_params.hpp>
#include <refx/pipeline/operands.hpp>
#include <refx/pipeline/report.hpp>
#include <refx/pipeline/rolled.hpp>
#include <refx/trace/cores.hpp>
#include <refx/trace/ref.hpp>

namespace refx {

/// How a grid is traced: `unrolled` records every step (integer grid
/// indices), `rolled` records one loop whose body is one step (traced grid
/// indices, copies decided at run time; pipeline/rolled.hpp), `automatic`
/// rolls a grid of more than rolled_grid_threshold steps when it can (every
/// index map takes `auto` indices and every block divides its operand).
enum class GridRolling { automatic, rolled, unrolled };
/// Above this many steps an automatic grid is rolled (when it can be).
inline constexpr std::int64_t rolled_grid_threshold = 256;

/// A grid extent known only when the kernel runs (Pallas' grid=(n, num_tiles,
/// k) with num_tiles traced): at most `bound`; read from element `element` of
/// pipeline_kernel's scalar operand `operand` (scalar_extent), or a traced
/// scalar of the kernel being traced (traced_extent, for emit_pipeline). A
/// grid with one is rolled; an extent below 0 or above its bound is a
/// run-time error naming the dimension.
struct DynamicExtent {
  std::int64_t bound = 0;
  int operand = -1;          ///< scalar_extent's scalar operand
  std::int64_t element = 0;  ///< ... and its element
  ValueId value = no_id;     ///< traced_extent's value
  constexpr bool dynamic() const noexcept { return operand >= 0 || value != no_id; }
};
/// The extent at element `element` of pipeline_kernel's scalar operand
/// number `operand` (counting from 0), at most `bound`.
constexpr DynamicExtent scalar_extent(int operand, std::int64_t element, std::int64_t bound) {
  return DynamicExtent{bound, operand, element, no_id};
}
/// The extent `value` (a traced integer of the kernel being traced), at most `bound`.
inline DynamicExtent traced_extent(const Scalar<std::int32_t>& value, std::int64_t bound) {
  return DynamicExtent{bound, -1, 0, value.id()};
}

/// The iteration space of a pipeline: one extent per dimension, visited in
/// row-major order (last dimension fastest), as Pallas' grid.
template <std::size_t R, GridRolling M = GridRolling::automatic>
struct Grid {
  static_assert(R >= 1 && R <= 4, "refx: a pipeline grid has 1 to 4 dimensions");
  static constexpr GridRolling rolling = M;
  std::array<std::int64_t, R> dims{};  ///< a dynamic extent's bound
  /// Per dimension: parallel or arbitrary (default); see pipeline/cores.hpp.
  std::array<DimensionSemantics, R> semantics{};
  /// Per dimension: where an extent known only at run time comes from.
  std::array<DynamicExtent, R> dynamic{};

  /// The same grid traced as one loop (a graph whose size does not depend on
  /// the step count): index maps take `auto` indices, the body reads its grid
  /// point with traced_program_id.
  constexpr Grid<R, GridRolling::rolled> rolled() const { return {dims, semantics, dynamic}; }
  /// The same grid with every step traced (integer program_id in the body).
  constexpr Grid<R, GridRolling::unrolled> unrolled() const { return {dims, semantics, dynamic}; }
  /// Whether an extent is known only at run time.
  constexpr bool has_dynamic_extent() const {
    for (const DynamicExtent& d : dynamic)
      if (d.dynamic()) return true;
    return false;
  }

  /// The same grid with one of `parallel` / `arbitrary` per dimension
  /// (Pallas' dimension_semantics): the cores of a device share out the
  /// parallel dimensions' steps.
  template <class... S>
  Grid dimension_semantics(S... s) const {
    static_assert(sizeof...(S) == R && (std::is_same_v<S, DimensionSemantics> && ...),
                  "refx: dimension_semantics takes one of refx::parallel / refx::arbitrary per grid dimension");
    Grid g = *this;
    if constexpr (sizeof...(S) == R) g.semantics = {s...};
    return g;
  }
};
template <std::integral... I>
constexpr Grid<sizeof...(I)> grid(I... extents) {
  return Grid<sizeof...(I)>{{static_cast<std::int64_t>(extents)...}};
}
/// A grid with extents known only at run time among its integers.
template <class... X>
  requires(((std::integral<X> || std::same_as<X, DynamicExtent>)&&...) && (std::same_as<X, DynamicExtent> || ...))
constexpr Grid<sizeof...(X)> grid(X... extents) {
  Grid<sizeof...(X)> g;
  std::size_t d = 0;
  const auto one = [&](auto x) {
    if constexpr (std::same_as<decltype(x), DynamicExtent>) {
      g.dims[d] = x.bound;
      g.dynamic[d] = x;
    } else {
      g.dims[d] = static_cast<std::int64_t>(x);
    }
    ++d;
  };
  (one(extents), ...);
  return g;
}

/// The tag of BlockSpec::buffered(n, lookahead).
struct Lookahead {};
inline constexpr Lookahead lookahead{};

/// Block shape `B...` of an Hbm operand and the index map from grid indices
/// (std::int64_t each) to block indices (one per dimension: integers or
/// traced integer scalars, as a std::array, a std::tuple, or one value for
/// rank 1). Element start along dimension d = block index * B_d (the index
/// itself along a squeezed, element(n) or bounded_slice(n) dimension). It keeps
/// the line it was written on: pipeline_kernel's messages about the operand
/// name it.
template <class Map, std::int64_t... B>
struct BlockSpec {
  static_assert(sizeof...(B) >= 1, "refx: a BlockSpec needs a block shape of rank >= 1");
  static_assert(((B >= 1 || B <= -1) && ...),
                "refx: a BlockSpec's block extents must be >= 1, `squeezed` (Pallas' None), or element(n) or "
                "bounded_slice(n) with n >= 1 (Pallas' pl.Element(n), pl.BoundedSlice(n))");
  static constexpr std::size_t rank = sizeof...(B);
  static constexpr std::array<std::int64_t, sizeof...(B)> block_extents{B...};
  Map map;
  int buffers = 2;  ///< slots in the ring (inputs: 1 = fetch and wait in the same step; outputs: 1 = synchronous)
  refx::source_location loc{};  ///< where block<...>(map) was written
  bool lookahead = false;       ///< an input fetches the next changed blocks as soon as slots free up

  /// The same spec with `n` slots (Pallas' pipeline_mode=pl.Buffered(n)).
  BlockSpec buffered(int n) const {
    BlockSpec s = *this;
    s.buffers = n;
    return s;
  }
  /// n slots, refilled with lookahead (Pallas' pl.Buffered(n,
  /// use_lookahead=True)): an input's next n - 1 distinct blocks are in
  /// flight however many steps ahead they are, not only the blocks of the
  /// next n - 1 steps. In a rolled grid the fetches look n - 1 steps ahead,
  /// as without it. The values the body sees are the same either way.
  BlockSpec buffered(int n, Lookahead) const {
    BlockSpec s = buffered(n);
    s.lookahead = true;
    return s;
  }
};
template <std::int64_t... B, class Map>
BlockSpec<Map, B...> block(Map map, refx::source_location loc = refx::source_location::current()) {
  return BlockSpec<Map, B...>{std::move(map), 2, loc};
}

/// pipeline_kernel's spec for an Hbm parameter the body gets as it is, unblocked
/// (Pallas' BlockSpec(memory_space=pl.ANY)): the body copies from it itself.
struct AnySpec {
  refx::source_location loc{};  ///< where any() was written
};
inline AnySpec any(refx::source_location loc = refx::source_location::current()) { return {loc}; }

/// An input operand: `ref`'s blocks are copied into Vmem before the body sees them.
template <class RefT, class Spec>
detail::PipeArg<RefT, Spec, detail::PipeRole::in> in(const RefT& ref, const Spec& spec,
                                                     refx::source_location loc = refx::source_location::current()) {
  return {ref, spec, loc};
}
/// An output operand: the body writes blocks in Vmem, copied back into `ref`.
template <class RefT, class Spec>
detail::PipeArg<RefT, Spec, detail::PipeRole::out> out(const RefT& ref, const Spec& spec,
                                                       refx::source_location loc = refx::source_location::current()) {
  return {ref, spec, loc};
}
/// A scratch operand (e.g. an accumulator) that lives across all steps.
template <class H>
detail::PipeScratch<H> scratch(refx::source_location loc = refx::source_location::current()) {
  return {loc};
}

/// The current grid index along `axis` inside a pipeline body (an unrolled
/// grid's; in a rolled grid it is traced: a trace-time error there).
REFX_DECL std::int64_t program_id(std::size_t axis, refx::source_location loc = refx::source_location::current());
/// The current grid index along `axis` as a traced scalar, in any grid (a
/// constant in an unrolled one): `when(traced_program_id(2) == 0, ...)`.
REFX_DECL Scalar<std::int32_t> traced_program_id(std::size_t axis,
                                                 refx::source_location loc = refx::source_location::current());
/// The grid's extent along `axis` inside a pipeline body.
REFX_DECL std::int64_t num_programs(std::size_t axis, refx::source_location loc = refx::source_location::current());

/// `emit_pipeline(grid, body)(operands...)`: see the top of this header.
/// `Scalars` (pipeline_kernel's scalar operands, a std::tuple of Smem Refs)
/// come after the grid indices in every index map and first in the body.
template <std::size_t R, class Body, class Scalars = std::tuple<>, GridRolling M = GridRolling::automatic>
class Pipeline {
 public:
  /// `entry` names the call the user wrote ("emit_pipeline" or
  /// "pipeline_kernel") in the pipeline's messages.
  Pipeline(Grid<R, M> g, Body body, refx::source_location loc, Scalars scalars = {},
           const char* entry = "emit_pipeline")
      : grid_(g), body_(std::move(body)), loc_(loc), scalars_(std::move(scalars)), entry_(entry) {}

  /// Traces the pipeline over `args` (in(...), out(...), scratch<H>()).
  template <class... A>
  PipelineReport operator()(const A&... args) const {
    static_assert(sizeof...(A) >= 1, "refx: emit_pipeline needs at least one operand");
    if constexpr (sizeof...(A) >= 1) {
      const detail::PipelineEntryScope entry(entry_);
      if constexpr (detail::check_pipeline_body<Body, Scalars, A...>()) {
        constexpr bool can_roll = (detail::rolls<A, Scalars, R>() && ...);
        if (grid_.has_dynamic_extent()) {
          if constexpr (can_roll && M != GridRolling::unrolled) return trace_dynamic(args...);
          else
            trace_error(loc_,
                        hint("write each index map as a generic lambda taking auto indices ([](auto i, auto j) "
                             "{{ ... }}), and do not unroll the grid"),
                        "{}: a grid extent known only at run time needs a rolled grid, whose index maps are "
                        "called with traced grid indices",
                        entry_);
        }
        static_assert(M != GridRolling::rolled || can_roll,
                      "refx: a rolled grid calls its index maps with traced grid indices (Scalar<std::int32_t>); "
                      "write each map as a generic lambda taking auto indices ([](auto i, auto j) { ... }), or keep "
                      "the grid unrolled "
                      "(grid(...).unrolled())");
        if constexpr (M != GridRolling::unrolled && can_roll) {
          if (const auto ops = roll_operands(args...);
              detail::roll_grid(ops, grid_.dims, M == GridRolling::rolled, loc_)) {
            // This core's share of the steps, as one range (pipeline/cores.hpp).
            const auto range = detail::core_step_range(grid_.dims, grid_.semantics, core_index(), num_cores());
            if (range) return range->count == 0 ? PipelineReport{} : trace_rolled(ops, *range, {}, args...);
            if constexpr (M == GridRolling::rolled)
              trace_error(loc_,
                          hint("put the parallel dimensions first, or unroll the grid "
                               "(grid(...).unrolled())"),
                          "{}: a rolled grid runs each core's share of its steps as one loop, so "
                          "its parallel dimensions come before its arbitrary ones; here an arbitrary "
                          "dimension comes before a parallel one",
                          entry_);
          }
        }
        if constexpr (M != GridRolling::rolled) return trace_pipeline(args...);
      }
    }
    return {};
  }

 private:
  template <class... A>
  PipelineReport trace_pipeline(const A&... args) const {
    const std::tuple<A...> as{args...};
    // This core's share of the grid (all of it on a device with one core).
    const auto points =
        detail::core_share(detail::grid_points(grid_.dims), grid_.dims, grid_.semantics, core_index(), num_cores());
    if (points.empty()) return PipelineReport{};  // another core runs this grid
    const std::vector<ValueId> scalar_refs = std::apply(
        [](const auto&... sc) {
          return std::vector<ValueId>{detail::Tracer::current().graph().view(sc.view()).ref...};
        },
        scalars_);
    std::vector<detail::PipeOperand> ops(sizeof...(A));
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (detail::describe<R>(std::get<I>(as), ops[I], points, scalars_, I, scalar_refs, loc_), ...);
    }
    (std::index_sequence_for<A...>{});
    detail::check_pipeline_operands(ops, grid_.dims, loc_);
    std::tuple<typename detail::handle_of<A>::type...> handles;
    PipelineReport report;
    auto done = [&] {
      detail::PipelineSchedule sched(ops, points.size(), loc_);
      sched.prologue();
      for (std::size_t s = 0; s < points.size(); ++s) {
        sched.before_body(s);
        {
          detail::FrameGuard frame(points[s], grid_.dims);
          [&]<std::size_t... I>(std::index_sequence<I...>) {
            std::apply(
                [&](const auto&... sc) {
                  body_(sc..., detail::body_arg<A>(ops[I], std::get<I>(handles), sched.slot(I, s),
                                                   detail::step_index(ops[I], s))...);
                },
                scalars_);
          }
          (std::index_sequence_for<A...>{});
        }
        sched.after_body(s);
      }
      sched.epilogue();
      report.steps = points.size();
      for (std::size_t k = 0; k < ops.size(); ++k) {
        report.copies.push_back(sched.copies(k));
        report.run_time_copies.push_back(sched.run_time_copies(k));
      }
    };
    detail::allocate_all<0>(as, ops, handles, done, loc_);
    if (auto* sink = detail::pipeline_report_sink()) sink->push_back(report);
    return report;
  }

  /// The operands described for a rolled trace (maps called at traced points).
  template <class... A>
  std::vector<detail::PipeOperand> roll_operands(const A&... args) const {
    std::vector<detail::PipeOperand> ops(sizeof...(A));
    std::size_t k = 0;
    ((detail::describe_rolled<R>(args, ops[k], scalars_, k), ++k), ...);
    return ops;
  }

  /// A grid with extents known only at run time: rolled, on one core.
  template <class... A>
  PipelineReport trace_dynamic(const A&... args) const {
    if (num_cores() > 1)
      trace_error(loc_, hint("run it on a mesh with one core per device"),
                  "{}: a grid extent known only at run time is not shared out over a device's {} cores", entry_,
                  num_cores());
    const auto ops = roll_operands(args...);
    (void)detail::roll_grid(ops, grid_.dims, true, loc_);
    std::vector<ValueId> extents(R, no_id);
    for (std::size_t d = 0; d < R; ++d) {
      const DynamicExtent& e = grid_.dynamic[d];
      if (!e.dynamic()) continue;
      ValueId v = e.value;
      if (e.operand >= 0) {
        if (static_cast<std::size_t>(e.operand) >= std::tuple_size_v<Scalars>)
          trace_error(loc_, "{}: grid dimension {} reads its extent from scalar operand {}, and there are {}", entry_,
                      d, e.operand, std::tuple_size_v<Scalars>);
        std::size_t k = 0;
        std::apply(
            [&](const auto&... sc) {
              ((v = k++ == static_cast<std::size_t>(e.operand) ? extent_of(sc, e, d) : v), ...);
            },
            scalars_);
      }
      extents[d] = detail::checked_extent(v, d, e.bound, entry_, loc_);
    }
    std::int64_t steps = 1;
    for (const std::int64_t b : grid_.dims) steps *= b;
    return trace_rolled(ops, detail::StepRange{0, steps}, extents, args...);
  }
  /// Element e.element of a scalar operand, as the int32 extent of dimension d.
  template <class S>
  ValueId extent_of(const S& sc, const DynamicExtent& e, std::size_t d) const {
    if constexpr (std::is_integral_v<typename S::value_type> && S::rank == 1) {
      return cast<std::int32_t>(sc.at(e.element).load(loc_), loc_).id();
    } else {
      trace_error(loc_,
                  "{}: grid dimension {} reads its extent from scalar operand {}, which is not a rank-1 "
                  "integer Smem Ref",
                  entry_, d, e.operand);
    }
  }

  /// `extents`: per dimension, a traced extent (no_id: the static one), or empty.
  template <class... A>
  PipelineReport trace_rolled(std::vector<detail::PipeOperand> ops, detail::StepRange range,
                              const std::vector<ValueId>& extents, const A&... args) const {
    const std::tuple<A...> as{args...};
    std::tuple<typename detail::handle_of<A>::type...> handles;
    PipelineReport report;
    // The frame's extents: a dynamic one is -1 (num_programs has no integer for it).
    std::array<std::int64_t, R> frame_dims = grid_.dims;
    for (std::size_t d = 0; d < extents.size(); ++d)
      if (extents[d] != no_id) frame_dims[d] = -1;
    auto done = [&] {
      detail::RolledSchedule sched(ops, grid_.dims, range, loc_, extents);
      report = sched.trace([&](std::span<const ValueId> point, std::span<const DynIndex> slots,
                               std::span<const std::vector<DynIndex>> index) {
        detail::FrameGuard frame(point, frame_dims);
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          std::apply(
              [&](const auto&... sc) {
                body_(sc..., detail::body_arg<A>(ops[I], std::get<I>(handles), slots[I], index[I])...);
              },
              scalars_);
        }
        (std::index_sequence_for<A...>{});
      });
    };
    detail::allocate_all<0>(as, ops, handles, done, loc_);
    if (auto* sink = detail::pipeline_report_sink()) sink->push_back(report);
    return report;
  }

  Grid<R, M> grid_;
  Body body_;
  refx::source_location loc_;
  Scalars scalars_;
  const char* entry_;
};

/// A pipeline over `g` running `body` on blocks; call it with the operands.
template <std::size_t R, GridRolling M, class Body>
Pipeline<R, std::decay_t<Body>, std::tuple<>, M> emit_pipeline(
    Grid<R, M> g, Body&& body, refx::source_location loc = refx::source_location::current()) {
  return {g, std::forward<Body>(body), loc};
}

/// The top-level form (Pallas' pallas_call): a kernel over `Params...`
/// whose body sees one block per Hbm parameter.
///  - Smem parameters come first: the scalar operands (Pallas'
///    PrefetchScalarGridSpec), inputs in Smem before the first step: integer
///    tables (page indices, group offsets), float scalars (an fp8 scale), and
///    state the body keeps across steps (a buffer index): a writable one is
///    still an input, passed like the others, whose Smem copy the body
///    writes (it is not returned). Every
///    index map gets them after its grid indices, the body before its
///    blocks; block indices read from them are compared at run time (an
///    unchanged block is not fetched again).
///  - Hbm parameters: read-only ones are inputs, writable ones outputs.
///  - `operands`: one spec per Hbm parameter, in order: a BlockSpec, or
///    any() for a parameter the body gets unblocked (pl.ANY: the body copies
///    from it, e.g. pages picked by a table); then any scratch<H>() operands
///    (an accumulator, Vmem buffers, DMA semaphores, Smem flags) living
///    across all steps, which the body gets last.
/// Its messages name the user's lines: an operand's, where its block<...>(),
/// any() or scratch<H>() was written; the pipeline's, where the first operand was.
template <class... Params, std::size_t R, GridRolling M, class Body, class... Operands>
auto pipeline_kernel(Grid<R, M> g, Body body, Operands... operands) {
  constexpr std::size_t n_scalars = detail::leading_true<detail::is_smem_ref_v<Params>...>();
  constexpr std::size_t n_blocks = sizeof...(Params) - n_scalars;
  constexpr std::size_t n_specs = detail::leading_true<!detail::is_pipe_scratch_v<Operands>...>();
  constexpr bool kinds = ((detail::is_smem_ref_v<Params> || detail::is_hbm_ref_v<Params> || is_none_v<Params>)&&...) &&
                         ((detail::is_hbm_ref_v<Params> || is_none_v<Params> ? 1 : 0) + ... + 0) == n_blocks;
  static_assert(kinds,
                "refx: pipeline_kernel's parameters are Smem Refs (scalar operands, first) then Hbm Refs "
                "(HbmRef<const T, ...> inputs, HbmRef<T, ...> outputs) or None (an optional operand not given)");
  constexpr bool scratch_last =
      ((detail::is_pipe_scratch_v<Operands> ? 1 : 0) + ... + 0) == sizeof...(Operands) - n_specs;
  static_assert(!kinds || scratch_last, "refx: pipeline_kernel's scratch<H>() operands come after all its BlockSpecs");
  static_assert(!kinds || !scratch_last || n_specs == n_blocks,
                "refx: pipeline_kernel needs one BlockSpec (or any()) per Hbm parameter, in order (then its "
                "scratch<H>() operands)");
  constexpr bool nones = [] {
    if constexpr (kinds && scratch_last && n_specs == n_blocks) return []<std::size_t... I>(std::index_sequence<I...>) {
        return ((is_none_v<std::tuple_element_t<n_scalars + I, std::tuple<Params...>>> ==
                 is_none_v<std::tuple_element_t<I, std::tuple<Operands...>>>)&&...);
      }
    (std::make_index_sequence<n_blocks>{});
    else return true;
  }();
  static_assert(nones, "refx: pipeline_kernel takes the spec `none` for a None parameter, and for no other");
  if constexpr (!(kinds && scratch_last && n_specs == n_blocks && nones)) {
    return 0;  // not reached: a check above failed to compile
  } else {
    struct K {
      Grid<R, M> g;
      Body body;
      std::tuple<Operands...> operands;
      void operator()(
          const typename detail::without_none<typename detail::kernel_param<Params>::type...>::type& given) const {
        auto run = [&](const std::tuple<Params...>& all) { trace(all); };
        detail::with_smem_state<std::tuple<Params...>>(
            detail::with_nones<std::tuple<typename detail::kernel_param<Params>::type...>>(given), run);
      }
      void trace(const std::tuple<Params...>& all) const {
        const auto one = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
          if constexpr (I >= n_blocks) {
            return std::get<I>(operands);  // scratch<H>()
          } else {
            const auto& ref = std::get<n_scalars + I>(all);
            const auto& spec = std::get<I>(operands);
            using P = std::remove_cvref_t<decltype(ref)>;
            if constexpr (is_none_v<P>) return detail::PipeNone{};
            else if constexpr (std::is_same_v<std::remove_cvref_t<decltype(spec)>, AnySpec>)
              return detail::PipeAny<P>{ref, spec.loc};
            else if constexpr (P::read_only) return in(ref, spec, spec.loc);
            else return out(ref, spec, spec.loc);
          }
        };
        const auto scalars = [&]<std::size_t... J>(std::index_sequence<J...>) {
          return std::tuple<std::tuple_element_t<J, std::tuple<Params...>>...>{std::get<J>(all)...};
        }
        (std::make_index_sequence<n_scalars>{});
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          Pipeline<R, Body, std::remove_const_t<decltype(scalars)>, M>(
              g, body, detail::operand_loc(std::get<0>(operands)), scalars,
              "pipeline_kernel")(one(std::integral_constant<std::size_t, I>{})...);
        }
        (std::index_sequence_for<Operands...>{});
      }
    };
    using KernelParams = typename detail::without_none<typename detail::kernel_param<Params>::type...>::type;
    return detail::PipelineKernelFn<K, KernelParams>{
        K{g, std::move(body), std::tuple<Operands...>{std::move(operands)...}}};
  }
}

}  // namespace refx

#if REFX_DEFINITIONS
#include <refx/pipeline/schedule.hpp>
#include <refx/pipeline/rolled_schedule.hpp>
#endif
