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
#include <cstdint>
#include <optional>
#include <refx/core/source_location.hpp>
#include <span>
#include <tuple>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/config.hpp>
#include <refx/trace/copy.hpp>
#include <refx/trace/ref.hpp>
#include <refx/trace/scopes.hpp>
#include <refx/trace/semaphore.hpp>

#if REFX_DEFINITIONS  // range-v3 only where the grid is enumerated (compiled once with refx::compiled)
#include <range/v3/view/cartesian_product.hpp>
#include <range/v3/view/iota.hpp>
#endif

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

namespace detail {
enum class PipeRole { in, out, scratch };

template <class RefT, class Spec, PipeRole Role>
struct PipeArg {
  static_assert(is_ref_v<RefT> && RefT::space == MemorySpace::hbm,
                "refx: emit_pipeline's in(...) / out(...) operands are Hbm Refs (the pipeline copies their blocks "
                "into Vmem)");
  static_assert(Spec::rank == RefT::rank,
                "refx: a BlockSpec's rank differs from its operand's rank; give one block extent per dimension "
                "of the Hbm Ref");
  static_assert(Role != PipeRole::out || !RefT::read_only,
                "refx: out(...) needs a writable Hbm Ref; a Ref<const T> can only be an in(...) operand");
  static constexpr PipeRole role = Role;
  RefT ref;
  Spec spec;
  refx::source_location loc;
};
template <class H>
struct PipeScratch {
  static_assert(param_traits<H>::supported, "refx: scratch<H> takes a Ref<...> or a semaphore type");
  using type = H;
};

/// One operand, type-erased, as the schedule sees it.
struct PipeOperand {
  PipeRole role = PipeRole::in;
  ViewId hbm = no_id;
  std::vector<std::int64_t> block;
  int buffers = 2;
  std::vector<std::vector<DynIndex>> index;  ///< block index per step
  ViewId window = no_id;                     ///< (buffers, block...) in Vmem
  ViewId sems = no_id;                       ///< (buffers) DMA semaphores
  // Filled by the schedule:
  std::vector<int> event;                        ///< per step: which run of equal block indices
  std::vector<std::size_t> event_step;           ///< per event: its first step
  std::vector<std::optional<AsyncCopy>> copies;  ///< per event
  std::vector<bool> waited;                      ///< per event (outputs)
};

/// Decides and emits the copies of a pipeline, step by step.
class PipelineSchedule {
 public:
  REFX_DECL PipelineSchedule(std::vector<PipeOperand>& ops, std::size_t steps, refx::source_location loc);
  REFX_DECL void prologue();
  REFX_DECL void before_body(std::size_t s);
  REFX_DECL void after_body(std::size_t s);
  REFX_DECL void epilogue();
  /// The window slot operand k's body sees at step s.
  REFX_DECL std::int64_t slot(std::size_t k, std::size_t s) const;
  /// Number of copies started for operand k (fetches or write-backs).
  REFX_DECL int copies(std::size_t k) const;
  std::size_t steps() const noexcept { return steps_; }

 private:
  REFX_DECL void start(std::size_t k, int e);
  REFX_DECL void wait(std::size_t k, int e);
  std::vector<PipeOperand>& ops_;
  std::size_t steps_;
  refx::source_location loc_;
};

/// Checks shapes and block indices (partial blocks, out-of-range blocks).
REFX_DECL void check_pipeline_operands(const std::vector<PipeOperand>& ops, std::span<const std::int64_t> grid,
                                       SourceLoc loc);
/// Every point of the grid, in row-major order.
REFX_DECL std::vector<std::vector<std::int64_t>> grid_points(std::span<const std::int64_t> dims);

/// The grid point of the innermost pipeline being traced.
struct PipelineFrame {
  std::span<const std::int64_t> point;
  std::span<const std::int64_t> dims;
};
inline std::vector<PipelineFrame>& pipeline_frames() {
  thread_local std::vector<PipelineFrame> frames;
  return frames;
}

template <class X>
DynIndex to_dyn_index(const X& x) {
  if constexpr (std::is_integral_v<X>) return DynIndex{static_cast<std::int64_t>(x), -1};
  else {
    static_assert(is_scalar_value_v<X> && std::is_integral_v<typename X::element_type>,
                  "refx: an index map returns integers or traced integer scalars (Scalar<std::int32_t>)");
    return DynIndex{0, x.id()};
  }
}
/// The block index tuple an index map returns, as one DynIndex per dimension.
template <std::size_t N, class Ret>
std::vector<DynIndex> block_indices(const Ret& r) {
  if constexpr (std::is_integral_v<Ret> || is_value_v<Ret>) {
    static_assert(N == 1,
                  "refx: an index map returns one block index per dimension of its operand; this one "
                  "returns a single index for an operand of rank > 1");
    return {to_dyn_index(r)};
  } else {
    static_assert(std::tuple_size_v<Ret> == N,
                  "refx: an index map returns one block index per dimension of its operand (a std::array or "
                  "std::tuple of that size)");
    return std::apply([](const auto&... x) { return std::vector<DynIndex>{to_dyn_index(x)...}; }, r);
  }
}

template <class Spec>
struct spec_shape;
template <class Map, std::int64_t... B>
struct spec_shape<BlockSpec<Map, B...>> {
  static std::vector<std::int64_t> dims() { return {B...}; }
  template <class T, bool Const>
  using block_ref = Ref<std::conditional_t<Const, const T, T>, extents<B...>, Vmem>;
  template <class T>
  using window_ref = Ref<T, extents<dyn, B...>, Vmem>;
};

template <class A>
struct pipe_traits;
template <class RefT, class Spec, PipeRole Role>
struct pipe_traits<PipeArg<RefT, Spec, Role>> {
  using T = typename RefT::value_type;
  using window = typename spec_shape<Spec>::template window_ref<T>;
  using sems = Semaphore<SemaphoreKind::dma, extents<dyn>>;
  using block = typename spec_shape<Spec>::template block_ref<T, Role == PipeRole::in>;
};

/// run_scoped bodies with fixed parameter types, handing the handles on.
template <class W, class S, class K>
struct WindowScope {
  K* k;
  void operator()(W w, S s) const { (*k)(w.view(), s.view()); }
};
template <class H, class K>
struct ScratchScope {
  K* k;
  void operator()(H h) const { (*k)(h); }
};

}  // namespace detail

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

namespace detail {
template <class A>
struct handle_of {
  using type = std::monostate;
};
template <class H>
struct handle_of<PipeScratch<H>> {
  using type = H;
};

template <std::size_t R, class A>
void describe(const A& a, PipeOperand& op, const std::vector<std::vector<std::int64_t>>& points) {
  if constexpr (requires { a.spec; }) {
    using Spec = std::remove_cvref_t<decltype(a.spec)>;
    op.role = std::remove_cvref_t<A>::role;
    op.hbm = a.ref.view();
    op.block = spec_shape<Spec>::dims();
    op.buffers = a.spec.buffers;
    op.index.reserve(points.size());
    for (const auto& p : points) {
      op.index.push_back([&]<std::size_t... I>(std::index_sequence<I...>) {
        static_assert(std::is_invocable_v<const decltype(a.spec.map)&, decltype((void)I, std::int64_t{})...>,
                      "refx: a BlockSpec's index map takes one grid index (std::int64_t) per grid dimension");
        return block_indices<Spec::rank>(a.spec.map(p[I]...));
      }(std::make_index_sequence<R>{}));
    }
  } else {
    op.role = PipeRole::scratch;
    op.index.assign(points.size(), {});
  }
}

template <std::size_t I, class Args, class Handles, class F>
void allocate_all(const Args& args, std::vector<PipeOperand>& ops, Handles& handles, F& done,
                  refx::source_location loc) {
  if constexpr (I == std::tuple_size_v<Args>) {
    done();
  } else {
    using A = std::tuple_element_t<I, Args>;
    if constexpr (requires { std::declval<A>().spec; }) {
      using W = typename pipe_traits<A>::window;
      using S = typename pipe_traits<A>::sems;
      auto next = [&](ViewId w, ViewId s) {
        ops[I].window = w;
        ops[I].sems = s;
        allocate_all<I + 1>(args, ops, handles, done, loc);
      };
      std::vector<std::int64_t> wdims{ops[I].buffers};
      wdims.insert(wdims.end(), ops[I].block.begin(), ops[I].block.end());
      run_scoped(std::vector<Shape>{Shape(std::span<const std::int64_t>(wdims)), Shape{ops[I].buffers}},
                 WindowScope<W, S, decltype(next)>{&next}, loc);
    } else {
      using H = typename A::type;
      auto next = [&](H h) {
        std::get<I>(handles) = h;
        allocate_all<I + 1>(args, ops, handles, done, loc);
      };
      run_scoped(ScratchScope<H, decltype(next)>{&next}, loc);
    }
  }
}

/// The handle the body gets for operand I at step s.
template <class A, class Handle>
auto body_arg(const PipeOperand& op, const Handle& h, std::int64_t slot) {
  if constexpr (requires { std::declval<A>().spec; }) {
    using B = typename pipe_traits<A>::block;
    const IndexEntry e[] = {IndexEntry{squeeze_dim, DynIndex{slot, -1}, 1, 1}};
    return B::from_view(make_view(op.window, std::span<const IndexEntry>(e)));
  } else {
    return h;
  }
}

struct FrameGuard {
  FrameGuard(std::span<const std::int64_t> p, std::span<const std::int64_t> d) { pipeline_frames().push_back({p, d}); }
  ~FrameGuard() { pipeline_frames().pop_back(); }
  FrameGuard(const FrameGuard&) = delete;
  FrameGuard& operator=(const FrameGuard&) = delete;
};
}  // namespace detail

/// `emit_pipeline(grid, body)(operands...)`: see the top of this header.
template <std::size_t R, class Body>
class Pipeline {
 public:
  Pipeline(Grid<R> g, Body body, refx::source_location loc) : grid_(g), body_(std::move(body)), loc_(loc) {}

  /// Traces the pipeline over `args` (in(...), out(...), scratch<H>()).
  template <class... A>
  PipelineReport operator()(const A&... args) const {
    static_assert(sizeof...(A) >= 1, "refx: emit_pipeline needs at least one operand");
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

 private:
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

#if REFX_DEFINITIONS
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

REFX_DECL std::int64_t program_id(std::size_t axis, refx::source_location loc) {
  const auto& f = detail::pipeline_frames();
  if (f.empty() || axis >= f.back().point.size())
    trace_error(loc, hint("call it inside an emit_pipeline body with an axis below the grid's rank"),
                "program_id({}) outside a pipeline body, or past the grid's rank", axis);
  return f.back().point[axis];
}
REFX_DECL std::int64_t num_programs(std::size_t axis, refx::source_location loc) {
  const auto& f = detail::pipeline_frames();
  if (f.empty() || axis >= f.back().dims.size())
    trace_error(loc, hint("call it inside an emit_pipeline body with an axis below the grid's rank"),
                "num_programs({}) outside a pipeline body, or past the grid's rank", axis);
  return f.back().dims[axis];
}
#endif  // REFX_DEFINITIONS

}  // namespace refx
