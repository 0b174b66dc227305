#pragma once
// Pallas-style pipelining: a grid, a BlockSpec per Hbm operand, and a body
// over Vmem blocks (docs/tutorial.md, "Pipelining blocks through Vmem").
//
//   emit_pipeline(grid(4, 2), body)(in(x, block<8, 128>(map)), out(z, block<8, 128>(map)), scratch<VmemRef<float, 8,
//   128>>());
//     inside a kernel: copies block after block of x into a ring of Vmem
//     slots, runs body(x_block, z_block, acc) on each, copies z's blocks back.
//   pipeline_kernel<HbmRef<const float, N>, HbmRef<float, N>>(grid, body, specs...)
//     the kernel itself (pallas_call): a kernel over Hbm Refs whose body sees blocks.
//
// The pipeline is generated with the public trace primitives (run_scoped
// windows and DMA semaphores, make_async_copy, start / wait), so the verifier
// checks it like user code. The grid is unrolled at trace time
// (docs/architecture.md, departure 12): which copies a step starts and waits
// is decided while tracing, by Pallas' rules — an input is fetched only when
// its block index changes between consecutive steps, an output is written
// back only when its block index is about to change or the grid ends. Block
// indices are integers or traced scalars (e.g. from axis_index); two traced
// indices are the same block only when they are the same traced value.
// program_id(axis) / num_programs(axis) give the current step's grid point
// inside the body (integers, since the grid is unrolled).

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
#include <refx/pipeline/operands.hpp>
#include <refx/trace/ref.hpp>

namespace refx {

/// The iteration space of a pipeline: one extent per dimension, visited in
/// row-major order (last dimension fastest), as Pallas' grid.
template <std::size_t R>
struct Grid {
  static_assert(R >= 1 && R <= 4, "refx: a pipeline grid has 1 to 4 dimensions");
  std::array<std::int64_t, R> dims{};
};
template <std::integral... I>
constexpr Grid<sizeof...(I)> grid(I... extents) {
  return Grid<sizeof...(I)>{{static_cast<std::int64_t>(extents)...}};
}

/// Block shape `B...` of an Hbm operand and the index map from grid indices
/// (std::int64_t each) to block indices (one per dimension: integers or
/// traced integer scalars, as a std::array, a std::tuple, or one value for
/// rank 1). Element start along dimension d = block index * B_d.
template <class Map, std::int64_t... B>
struct BlockSpec {
  static_assert(sizeof...(B) >= 1, "refx: a BlockSpec needs a block shape of rank >= 1");
  static_assert(((B >= 1) && ...), "refx: a BlockSpec's block extents must be >= 1");
  static constexpr std::size_t rank = sizeof...(B);
  static constexpr std::array<std::int64_t, sizeof...(B)> block_extents{B...};
  Map map;
  int buffers = 2;  ///< slots in the ring (inputs: 1 = fetch and wait in the same step; outputs: 1 = synchronous)

  /// The same spec with `n` slots (Pallas' pipeline_mode=pl.Buffered(n)).
  BlockSpec buffered(int n) const {
    BlockSpec s = *this;
    s.buffers = n;
    return s;
  }
};
template <std::int64_t... B, class Map>
BlockSpec<Map, B...> block(Map map) {
  return BlockSpec<Map, B...>{std::move(map)};
}

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
detail::PipeScratch<H> scratch() {
  return {};
}

/// The current grid index along `axis` inside a pipeline body.
REFX_DECL std::int64_t program_id(std::size_t axis, refx::source_location loc = refx::source_location::current());
/// The grid's extent along `axis` inside a pipeline body.
REFX_DECL std::int64_t num_programs(std::size_t axis, refx::source_location loc = refx::source_location::current());

/// What a traced pipeline did: its steps and, per operand, the copies it
/// started (fetches of an input, write-backs of an output; 0 for scratch).
struct PipelineReport {
  std::size_t steps = 0;
  std::vector<int> copies;
};

/// `emit_pipeline(grid, body)(operands...)`: see the top of this header.
template <std::size_t R, class Body>
class Pipeline {
 public:
  Pipeline(Grid<R> g, Body body, refx::source_location loc) : grid_(g), body_(std::move(body)), loc_(loc) {}

  /// Traces the pipeline over `args` (in(...), out(...), scratch<H>()).
  template <class... A>
  PipelineReport operator()(const A&... args) const {
    static_assert(sizeof...(A) >= 1, "refx: emit_pipeline needs at least one operand");
    if constexpr (sizeof...(A) >= 1) {
      if constexpr (detail::check_pipeline_body<Body, A...>()) return trace_pipeline(args...);
    }
    return {};
  }

 private:
  template <class... A>
  PipelineReport trace_pipeline(const A&... args) const {
    const std::tuple<A...> as{args...};
    const auto points = detail::grid_points(grid_.dims);
    std::vector<detail::PipeOperand> ops(sizeof...(A));
    [&]<std::size_t... I>(std::index_sequence<I...>) { (detail::describe<R>(std::get<I>(as), ops[I], points), ...); }
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
            body_(detail::body_arg<A>(ops[I], std::get<I>(handles), sched.slot(I, s))...);
          }
          (std::index_sequence_for<A...>{});
        }
        sched.after_body(s);
      }
      sched.epilogue();
      report.steps = points.size();
      for (std::size_t k = 0; k < ops.size(); ++k) report.copies.push_back(sched.copies(k));
    };
    detail::allocate_all<0>(as, ops, handles, done, loc_);
    return report;
  }

  Grid<R> grid_;
  Body body_;
  refx::source_location loc_;
};

/// A pipeline over `g` running `body` on blocks; call it with the operands.
template <std::size_t R, class Body>
Pipeline<R, std::decay_t<Body>> emit_pipeline(Grid<R> g, Body&& body,
                                              refx::source_location loc = refx::source_location::current()) {
  return {g, std::forward<Body>(body), loc};
}

/// The top-level form (Pallas' pallas_call): a kernel over the Hbm Refs
/// `Params...` whose body sees one block per parameter. Read-only
/// parameters are inputs, writable ones outputs; `specs` gives one
/// BlockSpec per parameter, in order.
template <class... Params>
struct PipelineKernel;

template <class... Params, std::size_t R, class Body, class... Specs>
auto pipeline_kernel(Grid<R> g, Body body, Specs... specs) {
  static_assert(sizeof...(Params) == sizeof...(Specs),
                "refx: pipeline_kernel needs one BlockSpec per kernel parameter");
  static_assert(
      ((is_ref_v<Params> && Params::space == MemorySpace::hbm) && ...),
      "refx: pipeline_kernel's parameters are Hbm Refs (HbmRef<const T, ...> inputs, HbmRef<T, ...> outputs)");
  struct K {
    Grid<R> g;
    Body body;
    std::tuple<Specs...> specs;
    void operator()(Params... refs) const {
      const auto one = [&]<std::size_t I>(std::integral_constant<std::size_t, I>, const auto& ref) {
        using P = std::remove_cvref_t<decltype(ref)>;
        if constexpr (P::read_only) return in(ref, std::get<I>(specs));
        else return out(ref, std::get<I>(specs));
      };
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        emit_pipeline(g, body)(one(std::integral_constant<std::size_t, I>{}, refs)...);
      }
      (std::index_sequence_for<Params...>{});
    }
  };
  return K{g, std::move(body), std::tuple<Specs...>{std::move(specs)...}};
}

}  // namespace refx

#if REFX_DEFINITIONS
#include <refx/pipeline/schedule.hpp>
#endif
