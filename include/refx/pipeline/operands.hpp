#pragma once
// emit_pipeline's operands as its schedule sees them: in(...) / out(...) /
// scratch<H>() arguments, type-erased into PipeOperand (role, Hbm view,
// block, index per step, Vmem window and DMA semaphores), the declarations of
// PipelineSchedule (which decides and emits the copies), and the templates
// that allocate the windows and hand the body its blocks. Users never name
// these; pipeline.hpp includes this header (the definitions of what is
// declared here are in pipeline/schedule.hpp).

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <refx/core/source_location.hpp>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/config.hpp>
#include <refx/pipeline/block_dims.hpp>
#include <refx/trace/copy.hpp>
#include <refx/trace/ref.hpp>
#include <refx/trace/scopes.hpp>
#include <refx/trace/semaphore.hpp>

namespace refx {

template <class Map, std::int64_t... B>
struct BlockSpec;  // pipeline.hpp

/// Pallas' None in a pallas_call's operand list: an optional operand not
/// given (an attention bias, segment ids, a residual output). As a
/// pipeline_kernel parameter type it is not a parameter of the kernel; its
/// spec is `none`, and the body gets a None in its place, which it tests
/// with `if constexpr (is_none_v<decltype(ab_ref)>)`.
struct None {};
inline constexpr None none{};
template <class T>
inline constexpr bool is_none_v = std::is_same_v<std::remove_cvref_t<T>, None>;

namespace detail {
enum class PipeRole { in, out, scratch };
/// Whether a step's block index differs from the previous step's: known
/// while tracing (integers, or one traced value), or decided at run time (a
/// traced comparison: indices read from scalar operands).
enum class BlockChange { same, differs, run_time };

inline const char* role_name(PipeRole r) {
  return r == PipeRole::in ? "input" : r == PipeRole::out ? "output" : "scratch";
}

/// No block extent exceeds a static extent of the operand (a dynamic one is
/// checked while tracing, check_pipeline_operands).
template <class E, std::size_t N>
constexpr bool block_within_extents(const std::array<std::int64_t, N>& block) {
  if constexpr (E::rank != N) {
    return true;  // the rank check reports this
  } else {
    for (std::size_t d = 0; d < N; ++d)
      if (E::values[d] != dyn && copied_extent(block[d]) > E::values[d]) return false;
    return true;
  }
}

/// The extents `B...` without the squeezed ones (the body's block shape).
template <class E, std::int64_t... B>
struct drop_squeezed {
  using type = E;
};
template <std::int64_t... K, std::int64_t B0, std::int64_t... B>
struct drop_squeezed<extents<K...>, B0, B...>
    : drop_squeezed<std::conditional_t<B0 == squeezed, extents<K...>, extents<K..., copied_extent(B0)>>, B...> {};

template <class RefT, class Spec, PipeRole Role>
struct PipeArg {
  static_assert(is_ref_v<RefT> && RefT::space == MemorySpace::hbm,
                "refx: emit_pipeline's in(...) / out(...) operands are Hbm Refs (the pipeline copies their blocks "
                "into Vmem)");
  static_assert(Spec::rank == RefT::rank,
                "refx: a BlockSpec's rank differs from its operand's rank; give one block extent per dimension "
                "of the Hbm Ref");
  static_assert(Role != PipeRole::in || block_within_extents<typename RefT::extents_type>(Spec::block_extents),
                "refx: a BlockSpec's block is larger than its input operand along a dimension (every block there "
                "would read padding past the array's end); give a block extent at most the operand's extent there "
                "(the whole dimension at most)");
  static_assert(Role != PipeRole::out || !RefT::read_only,
                "refx: out(...) needs a writable Hbm Ref; a Ref<const T> can only be an in(...) operand");
  static constexpr PipeRole role = Role;
  RefT ref;
  Spec spec;
  refx::source_location loc;
};
/// An Hbm operand the pipeline hands the body as it is (Pallas'
/// BlockSpec(memory_space=pl.ANY)): no blocks, no copies; the body copies
/// what it needs itself.
template <class RefT>
struct PipeAny {
  static_assert(is_ref_v<RefT> && RefT::space == MemorySpace::hbm,
                "refx: any() stands for an Hbm parameter, which the body gets unblocked");
  using type = RefT;
  RefT ref;
  refx::source_location loc;
};
/// An optional operand not given (pipeline_kernel's None): the body gets None.
struct PipeNone {
  using type = None;
  type ref;
  refx::source_location loc;
};
template <class H>
struct PipeScratch {
  static_assert(param_traits<H>::supported, "refx: scratch<H> takes a Ref<...> or a semaphore type");
  using type = H;
  refx::source_location loc;  ///< where scratch<H>() was written
};

/// One operand, type-erased, as the schedule sees it.
struct PipeOperand {
  PipeRole role = PipeRole::in;
  ViewId hbm = no_id;
  std::vector<std::int64_t> block;  ///< as copied (a squeezed dimension: 1)
  std::vector<bool> squeezed;       ///< per dimension: dropped from the body's block
  std::vector<bool> by_element;     ///< per dimension: the index map gives an element, not a block index
  std::vector<bool> bounded;        ///< per dimension: a bounded_slice(n) (the block starts anywhere in the array)
  std::vector<bool> traced;         ///< per dimension: some step's block index there is traced
  /// The window slot's extents: the block's, 2B - n % B along a dimension
  /// of extent n where an input's traced block index may pick the partial
  /// last block, 2B - 1 along a bounded_slice(n) (size_slots; body_arg views
  /// the block inside it).
  std::vector<std::int64_t> slot_block;
  int buffers = 2;
  bool lookahead = false;                    ///< fetches by distinct blocks, not by steps (inputs)
  refx::source_location loc;                 ///< of its in(...) / out(...)
  std::vector<std::vector<DynIndex>> index;  ///< block index per step
  ViewId window = no_id;                     ///< (buffers, block...) in Vmem
  ViewId sems = no_id;                       ///< (buffers) DMA semaphores
  // Filled by the schedule:
  std::vector<BlockChange> change;               ///< per step: whether its block index differs from the step before
  std::vector<ValueId> changed;                  ///< per step: the traced bool, where decided at run time
  std::vector<DynIndex> slot;                    ///< per step: the window slot (traced once a change is)
  std::vector<int> event;                        ///< per step: the last step at or before it that may change
  std::vector<std::size_t> event_step;           ///< per event: its step
  std::vector<std::optional<AsyncCopy>> copies;  ///< per event
  std::vector<bool> predicated;                  ///< per event: its copy was started with a run-time predicate
  std::vector<bool> waited;                      ///< per event (outputs)
  /// A rolled grid's index map: the block index at a grid point given as
  /// traced int32 scalars (pipeline/rolled.hpp).
  std::function<std::vector<DynIndex>(std::span<const ValueId>)> map_at;
};

/// Decides and emits the copies of a pipeline, step by step.
class PipelineSchedule {
 public:
  REFX_DECL PipelineSchedule(std::vector<PipeOperand>& ops, std::size_t steps, refx::source_location loc);
  REFX_DECL void prologue();
  REFX_DECL void before_body(std::size_t s);
  REFX_DECL void after_body(std::size_t s);
  REFX_DECL void epilogue();
  /// The window slot operand k's body sees at step s (traced once a run-time
  /// decision precedes it).
  REFX_DECL DynIndex slot(std::size_t k, std::size_t s) const;
  /// Number of copies started for operand k (fetches or write-backs), and
  /// how many of them run only where their block index changed at run time.
  REFX_DECL int copies(std::size_t k) const;
  REFX_DECL int run_time_copies(std::size_t k) const;
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
  std::span<const std::int64_t> point;  ///< an unrolled grid's point (empty in a rolled one)
  std::span<const std::int64_t> dims;
  std::span<const ValueId> traced;  ///< a rolled grid's point, traced int32 scalars (empty in an unrolled one)
};
inline std::vector<PipelineFrame>& pipeline_frames() {
  thread_local std::vector<PipelineFrame> frames;
  return frames;
}
/// The call the user wrote for the pipeline being traced ("emit_pipeline"
/// or "pipeline_kernel"): its messages start with it.
inline const char*& pipeline_entry() {
  thread_local const char* entry = "emit_pipeline";
  return entry;
}
class PipelineEntryScope {
 public:
  explicit PipelineEntryScope(const char* entry) : saved_(std::exchange(pipeline_entry(), entry)) {}
  ~PipelineEntryScope() { pipeline_entry() = saved_; }
  PipelineEntryScope(const PipelineEntryScope&) = delete;
  PipelineEntryScope& operator=(const PipelineEntryScope&) = delete;

 private:
  const char* saved_;
};

template <class Spec>
struct spec_shape;
template <class Map, std::int64_t... B>
struct spec_shape<BlockSpec<Map, B...>> {
  static std::vector<std::int64_t> dims() { return {copied_extent(B)...}; }
  static std::vector<bool> squeezed_dims() { return {(B == squeezed)...}; }
  static std::vector<bool> element_dims() { return {indexed_by_element(B)...}; }
  static std::vector<bool> bounded_dims() { return {is_bounded_slice(B)...}; }
  template <class T, bool Const>
  using block_ref = Ref<std::conditional_t<Const, const T, T>, typename drop_squeezed<extents<>, B...>::type, Vmem>;
  template <class T>
  using window_ref = Ref<T, dyn_extents<sizeof...(B) + 1>, Vmem>;  // (slots, slot_block...)
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

template <class A>
struct handle_of {
  using type = std::monostate;
};
template <class H>
struct handle_of<PipeScratch<H>> {
  using type = H;
};
template <class RefT>
struct handle_of<PipeAny<RefT>> {
  using type = RefT;
};
template <class A>
inline constexpr bool is_pipe_any_v = false;
template <class RefT>
inline constexpr bool is_pipe_any_v<PipeAny<RefT>> = true;
template <>
inline constexpr bool is_pipe_any_v<PipeNone> = true;  // handed on as it is, like any()
template <>
struct handle_of<PipeNone> {
  using type = None;
};

/// One call of operand k's index map at grid point `point`.
struct IndexMapCall {
  std::size_t k;
  PipeRole role;
  std::span<const std::int64_t> point;
  std::span<const ValueId> scalar_refs;
};
/// "emit_pipeline: the index map of operand k (input) reads scalar operand
/// j (shape [...]) out of its range at grid step (...)" for `call` (an
/// IndexMapCall) reading the Smem Ref `ref`.
REFX_DECL std::string index_map_reads(const void* call, ValueId ref);
/// While an index map runs: a traced index into a Smem Ref is checked at run
/// time with `context`'s sentence (trace/ref.hpp, smem_index_context).
class SmemIndexContextScope {
 public:
  explicit SmemIndexContextScope(const SmemIndexContext& context)
      : saved_(std::exchange(smem_index_context(), &context)) {}
  ~SmemIndexContextScope() { smem_index_context() = saved_; }
  SmemIndexContextScope(const SmemIndexContextScope&) = delete;
  SmemIndexContextScope& operator=(const SmemIndexContextScope&) = delete;

 private:
  const SmemIndexContext* saved_;
};

/// Rethrows `e`, raised by operand k's index map at grid point `point`, as
/// the pipeline's error: the operand, the step and, when the map read a
/// scalar operand (`scalar_refs`) out of its range, which one; the user's
/// line stays in the message.
[[noreturn]] REFX_DECL void index_map_failed(const TraceError& e, const IndexMapCall& call, std::size_t views_before,
                                             SourceLoc loc);

/// Refuses what operand k's index map did between `ops_before` and now (at
/// the grid step of `call`; a rolled grid's when `call.point` is empty):
/// read or write memory other than Smem. An index map runs on the scalar
/// core, which reads Smem only (pipeline_kernel's scalar operands, or a Smem
/// Ref the map captured). Names the user's line of the access (`fallback`
/// when the op has none).
REFX_DECL void check_index_map_memory(const IndexMapCall& call, std::size_t ops_before, SourceLoc fallback);

/// What every trace records of an operand with a BlockSpec (in or out):
/// role, Hbm view, block shape, ring size, line.
template <class A>
void describe_block_operand(const A& a, PipeOperand& op) {
  op.role = std::remove_cvref_t<A>::role;
  op.hbm = a.ref.view();
  op.block = spec_shape<std::remove_cvref_t<decltype(a.spec)>>::dims();
  op.squeezed = spec_shape<std::remove_cvref_t<decltype(a.spec)>>::squeezed_dims();
  op.by_element = spec_shape<std::remove_cvref_t<decltype(a.spec)>>::element_dims();
  op.bounded = spec_shape<std::remove_cvref_t<decltype(a.spec)>>::bounded_dims();
  op.buffers = a.spec.buffers;
  op.lookahead = a.spec.lookahead;
  op.loc = a.loc;
  op.traced.assign(op.block.size(), false);
}

/// Sizes operand `op`'s window slot (op.slot_block) for an Hbm operand of
/// `shape`. An input whose traced block index may pick the partial last
/// block along dimension d (B not dividing n) copies B elements from
/// min(b B, n - B), a start that keeps the copy inside the array, into a
/// slot 2B - n % B long there; the body views the B elements from
/// b B - min(b B, n - B) on (block_offset), so the last block's rows past
/// the array are rows no copy writes: poisoned once (PipelineSchedule and
/// RolledSchedule). An output's such block stays refused: its write-back
/// would have no size known while tracing.
inline void size_slots(PipeOperand& op, const Shape& shape) {
  op.slot_block = op.block;
  if (op.role != PipeRole::in) return;
  for (std::size_t d = 0; d < op.block.size(); ++d) {
    const std::int64_t B = op.block[d], n = shape[d];
    if (op.traced[d] && !op.by_element[d] && B < n && n % B != 0) op.slot_block[d] = 2 * B - n % B;
    if (op.bounded[d]) op.slot_block[d] = 2 * B - 1;  // a start up to n - 1 lies up to B - 1 into the slot
  }
}
/// Operand `op`'s block index at step s of an unrolled grid (none for scratch).
inline std::span<const DynIndex> step_index(const PipeOperand& op, std::size_t s) {
  return s < op.index.size() ? std::span<const DynIndex>(op.index[s]) : std::span<const DynIndex>{};
}
/// Whether operand `op` has a dimension whose slot is longer than its block.
inline bool has_tall_slots(const PipeOperand& op) { return op.slot_block != op.block; }

/// The start `v` (b B) of a block along dimension d, where the slot is
/// longer (size_slots): min(v, n - B), so that B elements from it lie in the
/// array; elsewhere v.
inline ValueId clamp_to_last_block(const PipeOperand& op, std::size_t d, ValueId v, const Shape& shape) {
  if (op.slot_block[d] == op.block[d]) return v;
  return apply(prim::min, {v, index_like(shape[d] - op.block[d], v, {})});
}

/// Where operand `op`'s block starts within its slot along dimension d, for
/// block index `b` (size_slots): 0 unless the slot is longer there.
inline DynIndex block_offset(const PipeOperand& op, std::size_t d, const DynIndex& b) {
  // (b B, or the start itself along a bounded slice, less the copy's start)
  if (op.slot_block[d] == op.block[d]) return DynIndex{0, -1};
  Tracer& t = Tracer::current();
  const Shape shape = t.graph().view_shape(op.hbm);
  if (b.is_static())  // a bounded slice's start past n - B; a partial block's copy lands at 0
    return DynIndex{op.bounded[d] ? b.constant - std::min(b.constant, shape[d] - op.block[d]) : 0, -1};
  const ValueId start = op.by_element[d] ? b.value : apply(prim::mul, {b.value, index_like(op.block[d], b.value, {})});
  return DynIndex{0, apply(prim::sub, {start, clamp_to_last_block(op, d, start, shape)})};
}

template <std::size_t R, class A, class Scalars = std::tuple<>>
void describe(const A& a, PipeOperand& op, const std::vector<std::vector<std::int64_t>>& points,
              const Scalars& scalars = {}, std::size_t k = 0, std::span<const ValueId> scalar_refs = {},
              SourceLoc loc = {}) {
  if constexpr (requires { a.spec; }) {
    using Spec = std::remove_cvref_t<decltype(a.spec)>;
    describe_block_operand(a, op);
    op.index.reserve(points.size());
    using Map = decltype(a.spec.map);
    constexpr IndexMapFault fault = index_map_fault<Map, R, Scalars>();
    constexpr bool callable = fault == IndexMapFault::none;
    static_assert(fault != IndexMapFault::scalars_first,
                  "refx: a BlockSpec's index map takes the grid indices first, then pipeline_kernel's scalar "
                  "operands (Pallas' lambda i, table: ...); write [](std::int64_t i, SmemRef<const std::int32_t, N> "
                  "table), not (table, i)");
    static_assert(fault != IndexMapFault::grid_index_count,
                  "refx: a BlockSpec's index map takes one grid index (std::int64_t) per grid dimension");
    static_assert(fault != IndexMapFault::traced_only,
                  "refx: a BlockSpec's index map compiles with traced grid indices (Scalar<std::int32_t>) but not "
                  "with integer ones (std::int64_t; the error above is in its body), and this grid is also traced "
                  "unrolled, with integers (an automatic grid(...) is unrolled at up to 256 steps); roll it "
                  "(grid(...).rolled()), or write the map so integers fit too (refx::min, refx::max and the "
                  "operators take them)");
    static_assert(fault != IndexMapFault::body,
                  "refx: a BlockSpec's index map does not compile when called with its grid indices (std::int64_t; "
                  "the error above is in its body): it returns one block index, or a std::array or std::tuple of "
                  "them, each an integer or a traced integer Scalar; std::array{i, 0} mixes std::int64_t and int: "
                  "write std::array<std::int64_t, 2>{i, 0} or std::tuple{i, 0}");
    if constexpr (callable) {
      for (const auto& p : points) {
        const std::size_t views_before = Tracer::current(loc).graph().num_views();
        const std::size_t ops_before = Tracer::current(loc).graph().num_ops();
        const IndexMapCall call{k, op.role, p, scalar_refs};
        const SmemIndexContext context{&index_map_reads, &call};
        try {
          const SmemIndexContextScope checked(context);
          op.index.push_back([&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>,
                                                                     std::index_sequence<J...>) {
            return block_indices<Spec::rank>(
                a.spec.map(p[I]..., std::get<J>(scalars)...), Spec::block_extents,
                [&] {
                  return fmt::format("{}: operand {} ({}) at grid step ({})", pipeline_entry(), k, role_name(op.role),
                                     fmt::join(p, ", "));
                },
                op.loc);
          }(std::make_index_sequence<R>{}, std::make_index_sequence<std::tuple_size_v<Scalars>>{}));
        } catch (const TraceError& e) {
          index_map_failed(e, call, views_before, loc);
        }
        check_index_map_memory(call, ops_before, op.loc);
      }
      for (const std::vector<DynIndex>& b : op.index)
        for (std::size_t d = 0; d < b.size(); ++d) op.traced[d] = op.traced[d] || !b[d].is_static();
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
      size_slots(ops[I], Tracer::current(loc).graph().view_shape(ops[I].hbm));
      std::vector<std::int64_t> wdims{ops[I].buffers};
      wdims.insert(wdims.end(), ops[I].slot_block.begin(), ops[I].slot_block.end());
      run_scoped(std::vector<Shape>{Shape(std::span<const std::int64_t>(wdims)), Shape{ops[I].buffers}},
                 WindowScope<W, S, decltype(next)>{&next}, loc);
    } else if constexpr (is_pipe_any_v<A>) {
      std::get<I>(handles) = std::get<I>(args).ref;
      allocate_all<I + 1>(args, ops, handles, done, loc);
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

/// The handle the body gets for operand I at a step: window slot `slot`,
/// block index `index` (the step's).
template <class A, class Handle>
auto body_arg(const PipeOperand& op, const Handle& h, DynIndex slot, std::span<const DynIndex> index) {
  if constexpr (requires { std::declval<A>().spec; }) {
    using B = typename pipe_traits<A>::block;
    // The slot, then each block dimension: squeezed, the block inside a
    // longer slot, or all of it.
    std::vector<IndexEntry> e{IndexEntry{squeeze_dim, slot, 1, 1}};
    for (std::size_t d = 0; d < op.block.size(); ++d) {
      if (op.squeezed[d]) e.push_back(IndexEntry{squeeze_dim, DynIndex{0, -1}, 1, 1});
      else if (op.slot_block[d] != op.block[d])
        e.push_back(IndexEntry{dyn, block_offset(op, d, index[d]), op.block[d], 1});
      else e.push_back(IndexEntry{keep_dim, {}, 0, 1});
    }
    return B::from_view(make_view(op.window, std::span<const IndexEntry>(e)));
  } else {
    return h;
  }
}

struct FrameGuard {
  FrameGuard(std::span<const std::int64_t> p, std::span<const std::int64_t> d) {
    pipeline_frames().push_back({p, d, {}});
  }
  FrameGuard(std::span<const ValueId> traced, std::span<const std::int64_t> d) {
    pipeline_frames().push_back({{}, d, traced});
  }
  ~FrameGuard() { pipeline_frames().pop_back(); }
  FrameGuard(const FrameGuard&) = delete;
  FrameGuard& operator=(const FrameGuard&) = delete;
};
}  // namespace detail

}  // namespace refx
