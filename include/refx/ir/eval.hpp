#pragma once
// Runs a graph on one device over concrete buffers. A resumable machine: an
// op may report `blocked` (a semaphore wait that cannot be satisfied yet) and
// the caller resumes it later with run(). The reference interpreter and the
// threaded runtime both drive this machine; they differ in their ExecEnv.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

#include <refx/config.hpp>
#include <refx/ir/buffer.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/view_access.hpp>

namespace refx {

class ExecContext;

/// A copy being started: the source region, the destination region (resolved
/// with the starting device's indices, into its own storage), the target
/// device and the semaphores to advance when it completes.
struct CopyRequest {
  ResolvedView src, dst;
  ValueId dst_ref = no_id;
  std::int32_t target = 0;
  ValueId recv_sem = no_id, send_sem = no_id;
  std::int64_t recv_index = 0, send_index = 0;
  /// What each semaphore rises by when the copy lands: its bytes for a DMA
  /// semaphore, 1 for a REGULAR one (a TPU v6e and later DMA completion).
  std::int64_t recv_inc = 0, send_inc = 0;
  CopyReduce reduce = CopyReduce::none;
  SourceLoc loc;
};

/// Where debug_print text goes: one message per call, without a newline.
using PrintSink = std::function<void(std::string_view)>;

/// A host effect an op hands to its ExecEnv (debug_print, io_callback; see
/// refx/ir/primitives/effects.hpp). An unordered effect refers to the device's
/// values and must be performed before host_effect returns; an ordered one
/// owns copies of its data, so an env may defer it (the threaded runtime
/// performs ordered effects in a deterministic cross-device order).
class HostEffect {
 public:
  virtual ~HostEffect() = default;
  /// Performs the effect: prints to `print`, or calls the user's function.
  virtual void perform(const PrintSink& print) = 0;
  bool ordered = false;
  std::uint8_t token = 0;  ///< the ordered-effect kind (Effect::token) when ordered
};

namespace detail {
inline void print_to_stdout(std::string_view s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}
}  // namespace detail

/// Performs `e`; a failure becomes a RuntimeError "refx: device <d>: <op> at
/// <line> raised: <what>" (no device part when device < 0) with the original
/// exception nested in it (std::rethrow_if_nested recovers it).
inline std::exception_ptr perform_host_effect(HostEffect& e, const Op& op, const PrintSink& print,
                                              std::int32_t device = -1) {
  const auto wrap = [&](std::string_view what) {
    try {
      std::throw_with_nested(
          RuntimeError(fmt::format("refx: {}{} at {} raised: {}", device >= 0 ? fmt::format("device {}: ", device) : "",
                                   op.prim->name, op.loc, what)));
    } catch (...) {
      return std::current_exception();
    }
  };
  try {
    e.perform(print);
  } catch (const std::exception& x) {
    return wrap(x.what());
  } catch (...) {
    return wrap("an exception that is not a std::exception");
  }
  return nullptr;
}

/// The device an evaluator runs on: identity in the mesh and communication.
/// The defaults serve one device in isolation (the reference interpreter);
/// the threaded runtime overrides them.
class ExecEnv {
 public:
  // Out of line: the key function, so that with separate compilation the
  // vtable and every virtual below (copy_start instantiates the copy loops
  // of every element type) are emitted in src/refx.cpp only, not in each
  // TU that includes this header.
  virtual ~ExecEnv();
  virtual std::int32_t device_id() const { return 0; }
  virtual std::int32_t num_devices() const { return 1; }
  /// Index and size along a named mesh axis.
  virtual std::int32_t axis_index(std::string_view axis) const;
  virtual std::int32_t axis_size(std::string_view axis) const;

  /// Adds `inc` to element `index` of semaphore `sem` on `device`; never blocks.
  virtual void semaphore_signal(ExecContext& ctx, const Op& op, ValueId sem, std::int64_t index, std::int64_t inc,
                                std::int32_t device);
  /// Cores of this device (Mesh::with_cores) and the one running.
  virtual std::int32_t num_cores() const { return 1; }
  virtual std::int32_t core_index() const { return 0; }
  /// Adds `inc` to element `index` of semaphore `sem` on core `core` of this
  /// device (core_barrier); never blocks.
  virtual void core_semaphore_signal(ExecContext& ctx, const Op& op, ValueId sem, std::int64_t index, std::int64_t inc,
                                     std::int32_t core);
  /// If the count is >= value, subtracts it and returns true; else returns
  /// false and the op will be retried (the device parks until then).
  virtual bool semaphore_wait(ExecContext& ctx, const Op& op, ValueId sem, std::int64_t index, std::int64_t value);
  virtual std::int64_t semaphore_read(ExecContext& ctx, ValueId sem, std::int64_t index);
  /// Starts a copy; it lands, then the semaphores rise by its byte count.
  virtual void copy_start(ExecContext& ctx, const Op& op, const CopyRequest& r);
  /// A copy passes::forward_copies forwarded: nothing moves (the ops beside
  /// it read its source or write its destination), and its receive
  /// semaphore rises at once as if it had landed. The runtime also counts it
  /// as a copy of its bytes (LaunchStats::forwarded).
  virtual void copy_forwarded(ExecContext& ctx, const Op& op, const CopyRequest& r) {
    semaphore_signal(ctx, op, r.recv_sem, r.recv_index, r.recv_inc, device_id());
  }
  /// The persistent barrier semaphore of a collective id.
  virtual Buffer& barrier_semaphore(std::int64_t collective_id);
  /// Whether scoped scratch is poison-filled (NaN / integer minimum) when
  /// allocated, so reads of never-written scratch show. The interpreter
  /// does; the runtime does in checked mode only (a memset of every scratch
  /// buffer on every call is too much for the fast path).
  virtual bool poisons_scratch() const { return true; }
  /// Checked runs: called before every op when observes_ops() is true.
  virtual bool observes_ops() const { return false; }
  virtual void before_op(ExecContext&, const Op&) {}
  /// A host effect reached by the device (debug_print, io_callback). The
  /// default performs it at once, in program order, printing to stdout.
  virtual void host_effect(ExecContext& ctx, const Op& op, std::unique_ptr<HostEffect> e);
  /// delay: the device is busy for `ns` nanoseconds. The default spins on
  /// the device's thread (a copy in flight lands meanwhile).
  virtual void delay(ExecContext& ctx, std::int64_t ns);

 private:
  std::unordered_map<std::int64_t, Buffer> barriers_;
};

inline std::int32_t ExecEnv::axis_index(std::string_view axis) const {
  throw RuntimeError(fmt::format("refx: axis_index(\"{}\"): this kernel runs without a mesh", axis));
}
inline std::int32_t ExecEnv::axis_size(std::string_view axis) const {
  throw RuntimeError(fmt::format("refx: axis_size(\"{}\"): this kernel runs without a mesh", axis));
}

class ExecContext {
 public:
  /// Allocates the storage of every scoped Ref up front (static allocation,
  /// as on a TPU): a peer may signal or copy into a scoped semaphore or buffer
  /// before this device has entered the scope.
  ExecContext(const Graph& g, ExecEnv& env)
      : graph_(g),
        env_(&env),
        device_(env.device_id()),
        observe_(env.observes_ops()),
        values_(g.num_values()),
        refs_(g.num_values()),
        storage_(g.num_values()),
        kept_(kept_ops(g)) {
    const auto allocate = [&](ValueId v) {
      const ValueType& t = g.type(v);
      auto buf = std::make_unique<Buffer>(t.dtype, t.shape);
      if (t.is_semaphore()) buf->fill_zero();
      else if (env.poisons_scratch()) buf->fill_poison();
      storage_[idx(v)] = std::move(buf);
      scoped_.push_back(v);
    };
    for (std::size_t b = 1; b < g.num_blocks(); ++b) {
      const Block& blk = g.block(static_cast<BlockId>(b));
      if (blk.owner == no_id || g.op(blk.owner).prim->control != ControlKind::scope) continue;
      for (ValueId p : blk.params) allocate(p);
    }
    for (std::size_t o = 0; o < g.num_ops(); ++o)
      if (const Op& op = g.op(static_cast<OpId>(o)); op.prim->allocates)
        for (ValueId v : g.outputs(op)) allocate(v);
    std::sort(scoped_.begin(), scoped_.end());
    frames_.push_back(Frame{0, 0, 0, 0, no_id});
  }
  ExecContext(const ExecContext&) = delete;
  ExecContext& operator=(const ExecContext&) = delete;

  /// Makes a finished context ready to run the kernel again, on `env`: the
  /// scoped storage and the values' buffers are kept (the threaded runtime
  /// reuses contexts between launches of a program), semaphores restart at
  /// 0, and scratch is poisoned again if `env` asks for it. On the same
  /// device as before, the results of kept ops (kept_ops) stand and those ops
  /// do not run again; on another, they run again.
  void reset(ExecEnv& env) {
    if (env.device_id() != device_)
      for (Kept& k : kept_)
        if (k == Kept::computed) k = Kept::once;
    device_ = env.device_id();
    env_ = &env;
    observe_ = env.observes_ops();
    const bool poison = env.poisons_scratch();
    for (ValueId v : scoped_) {
      if (graph_.type(v).is_semaphore()) storage_[idx(v)]->fill_zero();
      else if (poison) storage_[idx(v)]->fill_poison();
    }
    std::fill(refs_.begin(), refs_.end(), nullptr);
    frames_.assign(1, Frame{0, 0, 0, 0, no_id});
    yield_ = false;
  }

  /// Binds kernel parameter i (a Ref) to caller-owned storage.
  void bind_param(std::size_t i, Buffer& storage) {
    const ValueId p = graph_.params()[i];
    const ValueType& t = graph_.type(p);
    if (storage.dtype() != t.dtype || !(storage.shape() == t.shape))
      throw Error(fmt::format("refx: kernel argument {} is {}{} but the kernel expects {}{}", i, storage.dtype(),
                              storage.shape(), t.dtype, t.shape));
    refs_[static_cast<std::size_t>(p)] = &storage;
  }

  /// Runs until the kernel finishes (done) or an op cannot proceed (blocked).
  ExecStatus run();
  bool finished() const noexcept { return frames_.empty(); }
  /// Makes run() return (blocked) after the op being run, to be resumed at
  /// the next: for an env that interleaves devices at their copies and
  /// signals (refx/explore/detail/controlled.hpp).
  void yield_after_op() noexcept { yield_ = true; }
  /// The op the device is at (for deadlock reports), or null when done.
  const Op* current_op() const noexcept { return op_ahead(0); }
  /// The op after the running one in its block, or null at the block's end.
  const Op* next_op() const noexcept { return op_ahead(1); }

  // ---- for primitive implementations
  const Graph& graph() const noexcept { return graph_; }
  ExecEnv& env() noexcept { return *env_; }
  const Buffer& in(const Op& op, std::size_t i) const { return values_[idx(graph_.inputs(op)[i])]; }
  Buffer& value(ValueId v) { return values_[idx(v)]; }
  Buffer* ref(ValueId v) const { return refs_[idx(v)]; }
  void set_ref(ValueId v, Buffer* b) { refs_[idx(v)] = b; }
  /// The storage of a Ref whether or not its scope is active (for peers).
  Buffer* storage(ValueId v) const { return storage_[idx(v)] ? storage_[idx(v)].get() : refs_[idx(v)]; }
  /// Every scoped allocation (to check that semaphores end at zero).
  template <class F>
  void for_each_scoped(F&& f) const {
    for (ValueId v : scoped_) f(v, *storage_[idx(v)]);
  }
  std::int64_t attr(const Op& op, std::size_t i) const { return graph_.attrs(op)[i]; }
  /// Allocates output i of `op` with its traced type (reusing the buffer of
  /// an earlier run, never a borrowed one: the op writes it).
  Buffer& out(const Op& op, std::size_t i) {
    const ValueId v = graph_.outputs(op)[i];
    const ValueType& t = graph_.type(v);
    Buffer& b = values_[idx(v)];
    if (b.dtype() != t.dtype || !(b.shape() == t.shape) || b.bytes() == 0 || b.borrowed()) b = Buffer(t.dtype, t.shape);
    return b;
  }
  /// Sets output i of `op`; `b` may be borrowed (Buffer::borrow: a load that
  /// reads in place), when nothing changes its memory before its last use.
  void set_out(const Op& op, std::size_t i, Buffer b) { values_[idx(graph_.outputs(op)[i])] = std::move(b); }
  /// Resolves view i of `op` against current scalar values; checks bounds.
  ResolvedView view(const Op& op, std::size_t i) const { return resolve(graph_.views(op)[i], op.loc); }
  ResolvedView resolve(ViewId id, SourceLoc loc) const;
  /// Where view i of `op` starts in its Ref, in elements, checked as view()
  /// checks it, without building its shape (a semaphore's index).
  std::int64_t view_offset(const Op& op, std::size_t i) const {
    std::int64_t offset = 0;
    walk(graph_.views(op)[i], op.loc,
         [&](std::int64_t start, const DimIndex&, std::int64_t base_stride) { offset += start * base_stride; });
    return offset;
  }
  std::int64_t scalar(ValueId v) const { return values_[idx(v)].as_int(0); }

 private:
  struct Frame {
    BlockId block;
    std::uint32_t pc;
    std::int64_t iter, hi;
    OpId owner;
  };
  static std::size_t idx(ValueId v) noexcept { return static_cast<std::size_t>(v); }
  // Per op: whether run() computes it every time, or once per device (a
  // pure op, Primitive::pure, without views, whose inputs are all outputs of
  // such ops: constants, axis_index and the arithmetic on them), and whether
  // it has been.
  enum class Kept : std::uint8_t { never, once, computed };
  static std::vector<Kept> kept_ops(const Graph& g) {
    std::vector<Kept> kept(g.num_ops(), Kept::never);
    std::vector<bool> value_kept(g.num_values(), false);
    // Op ids need not follow the data flow (passes add ops): to a fixed point.
    for (bool grew = true; grew;) {
      grew = false;
      for (std::size_t o = 0; o < g.num_ops(); ++o) {
        const Op& op = g.op(static_cast<OpId>(o));
        if (kept[o] != Kept::never || !op.prim->pure || !g.views(op).empty()) continue;
        const auto ins = g.inputs(op);
        if (!std::all_of(ins.begin(), ins.end(), [&](ValueId v) { return value_kept[idx(v)]; })) continue;
        kept[o] = Kept::once;
        for (ValueId v : g.outputs(op)) value_kept[idx(v)] = true;
        grew = true;
      }
    }
    return kept;
  }
  /// The op `ahead` places after the running one in its block, or null.
  const Op* op_ahead(std::uint32_t ahead) const noexcept {
    if (frames_.empty()) return nullptr;
    const Frame& f = frames_.back();
    const Block& b = graph_.block(f.block);
    return f.pc + ahead < b.ops.size() ? &graph_.op(b.ops[f.pc + ahead]) : nullptr;
  }
  /// The Ref's storage under view `id`; calls per_dim(start, index, the
  /// Ref's stride) for each dimension after checking that it fits.
  template <class PerDim>
  Buffer* walk(ViewId id, SourceLoc loc, PerDim per_dim) const;
  void enter(const Op& op);
  void leave();
  // Clones first, then assigns: a loop body may return its carries permuted.
  void copy_results_to(std::span<const ValueId> results, std::span<const ValueId> targets) {
    std::vector<Buffer> staged;
    staged.reserve(results.size());
    for (ValueId r : results) staged.push_back(values_[idx(r)].clone());
    for (std::size_t i = 0; i < targets.size(); ++i) values_[idx(targets[i])] = std::move(staged[i]);
  }

  const Graph& graph_;
  ExecEnv* env_;
  std::int32_t device_;  // whose kept results values_ holds
  bool observe_;
  bool yield_ = false;
  std::vector<Buffer> values_;
  std::vector<Buffer*> refs_;
  std::vector<std::unique_ptr<Buffer>> storage_;
  std::vector<ValueId> scoped_;  // the values with storage_, in id order
  std::vector<Frame> frames_;
  std::vector<Kept> kept_;  // per op
};

template <class PerDim>
Buffer* ExecContext::walk(ViewId id, SourceLoc loc, PerDim per_dim) const {
  const View& v = graph_.view(id);
  Buffer* const buffer = refs_[idx(v.ref)];
  if (buffer == nullptr) runtime_error(loc, "a Ref is used outside the scope that owns it");
  const Shape& base = buffer->shape();
  const auto base_strides = base.strides();
  for (std::size_t d = 0; d < v.rank; ++d) {
    const DimIndex& di = graph_.dims(v)[d];
    const std::int64_t start = di.start.is_static() ? di.start.constant : scalar(di.start.value);
    if (!window_fits(start, di.size, di.stride, base[d]))
      throw index_out_of_bounds(start, di.size, di.stride, d, base[d], loc);
    per_dim(start, di, base_strides[d]);
  }
  return buffer;
}

inline ResolvedView ExecContext::resolve(ViewId id, SourceLoc loc) const {
  const View& v = graph_.view(id);
  ResolvedView r;
  std::size_t k = 0;
  r.buffer = walk(id, loc, [&](std::int64_t start, const DimIndex& di, std::int64_t base_stride) {
    r.offset += start * base_stride;
    if (!di.squeezed) {
      r.shape.push_back(di.size);
      r.strides[k++] = di.stride * base_stride;
    }
  });
  // A reshaped view of the Ref's own element type is its (contiguous, checked
  // when traced) footprint with the new extents. A view that changes the
  // element type resolves to its footprint in the Ref's elements: that is
  // what the race detector and bounds need, and load / store / accum move its
  // bytes themselves (ref_ops.hpp); copies through it are rejected when traced.
  if (const ViewLayout* l = graph_.layout(v); l != nullptr && l->dtype == r.buffer->dtype() && !(l->shape == r.shape)) {
    r.shape = l->shape;
    std::int64_t run = 1;
    for (std::size_t d = r.shape.rank(); d-- > 0;) {
      r.strides[d] = run;
      run *= r.shape[d];
    }
  }
  return r;
}

inline void ExecContext::enter(const Op& op) {
  const auto bodies = graph_.bodies(op);
  const auto ins = graph_.inputs(op);
  const OpId self = static_cast<OpId>(&op - &graph_.op(0));
  switch (op.prim->control) {
    case ControlKind::scope: {
      // attrs[0] = how many params are initialised from inputs (run_state).
      const Block& b = graph_.block(bodies[0]);
      for (std::size_t i = 0; i < b.params.size(); ++i) {
        Buffer* storage = storage_[idx(b.params[i])].get();
        if (i < ins.size()) std::memcpy(storage->data(), values_[idx(ins[i])].data(), storage->bytes());
        refs_[idx(b.params[i])] = storage;
      }
      frames_.push_back(Frame{bodies[0], 0, 0, 0, self});
      return;
    }
    case ControlKind::loop: {
      // inputs: lo, hi, carries...; body params: i, carries...
      const std::int64_t lo = scalar(ins[0]), hi = scalar(ins[1]);
      if (lo >= hi) {
        for (std::size_t i = 2; i < ins.size(); ++i)
          values_[idx(graph_.outputs(op)[i - 2])] = values_[idx(ins[i])].clone();
        ++frames_.back().pc;
        return;
      }
      const Block& b = graph_.block(bodies[0]);
      values_[idx(b.params[0])] = Buffer(graph_.type(b.params[0]).dtype, Shape{});
      visit_dtype(graph_.type(b.params[0]).dtype, [&](auto tag) {
        *values_[idx(b.params[0])].data<typename decltype(tag)::type>() = static_cast<typename decltype(tag)::type>(lo);
      });
      copy_results_to(ins.subspan(2), std::span(b.params).subspan(1));
      frames_.push_back(Frame{bodies[0], 0, lo, hi, self});
      return;
    }
    case ControlKind::cond: {
      // when: one body, run where the predicate holds; cond: the second body otherwise.
      if (scalar(ins[0]) != 0) {
        frames_.push_back(Frame{bodies[0], 0, 0, 0, self});
      } else if (bodies.size() > 1) {
        frames_.push_back(Frame{bodies[1], 0, 0, 0, self});
      } else {
        ++frames_.back().pc;
      }
      return;
    }
    case ControlKind::none: break;
  }
}

// The current block ran to its end: loop again, or hand results to the owner.
inline void ExecContext::leave() {
  Frame& f = frames_.back();
  const Block& b = graph_.block(f.block);
  if (f.owner == no_id) {
    frames_.pop_back();
    return;
  }
  const Op& owner = graph_.op(f.owner);
  if (owner.prim->control == ControlKind::loop && ++f.iter < f.hi) {
    visit_dtype(graph_.type(b.params[0]).dtype, [&](auto tag) {
      *values_[idx(b.params[0])].data<typename decltype(tag)::type>() =
          static_cast<typename decltype(tag)::type>(f.iter);
    });
    copy_results_to(b.results, std::span(b.params).subspan(1));
    f.pc = 0;
    return;
  }
  copy_results_to(b.results, graph_.outputs(owner));
  for (ValueId p : b.params)
    if (graph_.type(p).is_ref()) refs_[idx(p)] = nullptr;
  frames_.pop_back();
  ++frames_.back().pc;
}

inline ExecStatus ExecContext::run() {
  while (!frames_.empty()) {
    Frame& f = frames_.back();
    const Block& b = graph_.block(f.block);
    if (f.pc == b.ops.size()) {
      leave();
      continue;
    }
    const OpId id = b.ops[f.pc];
    Kept& kept = kept_[static_cast<std::size_t>(id)];
    // Its result from an earlier run on this device stands (observers see every op).
    if (kept == Kept::computed && !observe_) {
      ++f.pc;
      continue;
    }
    const Op& op = graph_.op(id);
    if (op.prim->control != ControlKind::none) {
      enter(op);
      continue;
    }
    if (observe_) env_->before_op(*this, op);
    if (op.prim->impl(*this, op) == ExecStatus::blocked) return ExecStatus::blocked;
    if (kept == Kept::once) kept = Kept::computed;
    ++frames_.back().pc;
    if (yield_) {  // the env asked to stop after this op (refx::explore's scheduling points)
      yield_ = false;
      return ExecStatus::blocked;
    }
  }
  return ExecStatus::done;
}

inline void ExecEnv::semaphore_signal(ExecContext& ctx, const Op& op, ValueId sem, std::int64_t index, std::int64_t inc,
                                      std::int32_t device) {
  if (device != device_id()) runtime_error(op.loc, "semaphore_signal to device {} on a single-device run", device);
  ctx.ref(sem)->data<std::int64_t>()[index] += inc;
}
inline void ExecEnv::core_semaphore_signal(ExecContext& ctx, const Op& op, ValueId sem, std::int64_t index,
                                           std::int64_t inc, std::int32_t core) {
  if (core != core_index()) runtime_error(op.loc, "semaphore signal to core {} on a single-core run", core);
  ctx.ref(sem)->data<std::int64_t>()[index] += inc;
}
inline bool ExecEnv::semaphore_wait(ExecContext& ctx, const Op&, ValueId sem, std::int64_t index, std::int64_t value) {
  std::int64_t& c = ctx.ref(sem)->data<std::int64_t>()[index];
  if (c < value) return false;
  c -= value;
  return true;
}
inline std::int64_t ExecEnv::semaphore_read(ExecContext& ctx, ValueId sem, std::int64_t index) {
  return ctx.ref(sem)->data<std::int64_t>()[index];
}
inline void ExecEnv::copy_start(ExecContext& ctx, const Op& op, const CopyRequest& r) {
  if (r.target != device_id()) runtime_error(op.loc, "remote copy to device {} on a single-device run", r.target);
  copy_view(r.src, r.dst, r.reduce);
  ctx.ref(r.recv_sem)->data<std::int64_t>()[r.recv_index] += r.recv_inc;
  if (r.send_sem != no_id) ctx.ref(r.send_sem)->data<std::int64_t>()[r.send_index] += r.send_inc;
}
inline void ExecEnv::host_effect(ExecContext&, const Op& op, std::unique_ptr<HostEffect> e) {
  if (auto error = perform_host_effect(*e, op, detail::print_to_stdout)) std::rethrow_exception(error);
}
inline void ExecEnv::delay(ExecContext&, std::int64_t ns) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}
inline Buffer& ExecEnv::barrier_semaphore(std::int64_t collective_id) {
  auto [it, fresh] = barriers_.try_emplace(collective_id, DType::i64, Shape{});
  if (fresh) it->second.fill_zero();
  return it->second;
}

#if REFX_DEFINITIONS
REFX_DECL ExecEnv::~ExecEnv() = default;
#endif  // REFX_DEFINITIONS

}  // namespace refx
