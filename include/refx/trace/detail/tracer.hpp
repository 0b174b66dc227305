#pragma once
// The trace context: records ops into a Graph while a kernel runs once over
// symbolic handles. One tracer is active per thread at a time.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <span>
#include <utility>
#include <vector>

#include <refx/config.hpp>
#include <refx/core/mesh.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/primitive.hpp>

namespace refx::detail {

class Tracer {
 public:
  Tracer();

  static Tracer*& current_slot() noexcept;
  /// The active tracer; throws if the caller is not inside a trace.
  static Tracer& current(SourceLoc loc = {});

  /// This trace's number, unique in the process: the handles it makes
  /// (Ref, Value, Semaphore, copy descriptors) carry it and are valid only
  /// here.
  std::uint64_t serial() const noexcept { return serial_; }
  /// The active tracer's serial, or 0 outside a trace.
  static std::uint64_t current_serial() noexcept {
    const Tracer* t = current_slot();
    return t != nullptr ? t->serial_ : 0;
  }
  /// Throws unless a handle stamped `serial` may be used here (0: an empty
  /// handle, or outside a trace: reported where it is used).
  static void check_serial(std::uint64_t serial) {
    const Tracer* t = current_slot();
    if (serial != 0 && t != nullptr && serial != t->serial_) t->foreign_handle();
  }

  /// The mesh the kernel is traced for (null for a single-device trace).
  const Mesh* mesh() const noexcept { return mesh_; }
  void set_mesh(const Mesh* m) noexcept { mesh_ = m; }
  /// The kernel's collective id (for get_barrier_semaphore), or -1.
  std::int64_t collective_id() const noexcept { return collective_id_; }
  void set_collective_id(std::int64_t id) noexcept { collective_id_ = id; }

  /// Nothing with an effect traced yet, and tracing the kernel's top level
  /// (not a loop, branch or scope body): see refx::at_kernel_entry.
  bool at_entry() const noexcept { return !effects_traced_ && open_.size() == 1; }

  Graph& graph() noexcept { return graph_; }
  const Graph& graph() const noexcept { return graph_; }
  /// Names the buffer under view `v` (Ref::name, Semaphore::name).
  void name_ref(ViewId v, std::string n) { graph_.set_name(graph_.view(v).ref, std::move(n)); }
  BlockId current_block() const noexcept { return open_.back(); }

  /// While known, every op is recorded at `loc` (the user's line), whatever
  /// line traced it: see AttributeTo. Returns the previous one.
  SourceLoc attribute_to(SourceLoc loc) noexcept { return std::exchange(attribute_to_, loc); }

  /// The most recent user source line seen (operators cannot take one).
  SourceLoc near() const noexcept { return last_loc_; }
  void note(SourceLoc loc) noexcept {
    if (loc.known()) last_loc_ = loc;
  }

  // ---- blocks and scopes
  BlockId open_block();
  void close_block(BlockId b) {
    block_open_[static_cast<std::size_t>(b)] = 0;
    open_.pop_back();
  }
  std::int32_t open_scope(SourceLoc loc) {
    scope_alive_.push_back(1);
    scope_loc_.push_back(loc);
    return static_cast<std::int32_t>(scope_alive_.size() - 1);
  }
  void close_scope(std::int32_t s) { scope_alive_[static_cast<std::size_t>(s)] = 0; }

  /// Adds a parameter to the current block (kernel Refs, loop carries, scratch).
  ValueId add_param(ValueType t, std::int32_t scope);

  // ---- checks on handles
  void check_value(ValueId v, SourceLoc loc) const;
  void check_ref(ValueId ref, SourceLoc loc) const;

  /// A view built with a static out-of-bounds index fails where it is used.
  void inherit_view_error(ViewId parent, ViewId child, std::string error);
  void check_view(ViewId v, SourceLoc loc) const;

  // ---- recording
  /// Records an op whose outputs come from the primitive's abstract evaluation.
  std::span<const ValueId> bind(const Primitive& p, std::span<const ValueId> inputs, std::span<const ViewId> views,
                                std::span<const std::int64_t> attrs, SourceLoc loc);
  ValueId bind1(const Primitive& p, std::span<const ValueId> inputs, std::span<const ViewId> views,
                std::span<const std::int64_t> attrs, SourceLoc loc);

  /// Records an op with explicit output types, effects and bodies (control flow).
  std::span<const ValueId> record(const Primitive& p, std::span<const ValueId> inputs, std::span<const ViewId> views,
                                  std::span<const std::int64_t> attrs, std::span<const ValueType> outs,
                                  std::span<const Effect> effects, std::span<const BlockId> bodies, SourceLoc loc);

  Graph take() && { return std::move(graph_); }

  // ---- random bits (trace/random.hpp)
  /// The key the latest prng_seed made (no_id before any), where it was
  /// called, and how many prng_random_bits calls have used it: each call is
  /// numbered, so no two give the same bits.
  struct PrngState {
    ValueId key = no_id;
    SourceLoc seeded_at;
    std::int64_t calls = 0;
  };
  PrngState& prng() noexcept { return prng_; }
  /// The fori_loop bodies being traced, outermost first: each one's block
  /// and its index parameter (see LoopBody).
  struct OpenLoop {
    BlockId body;
    ValueId index;
  };
  std::span<const OpenLoop> open_loops() const noexcept { return open_loops_; }
  /// The blocks being traced, the kernel's first.
  std::span<const BlockId> open_blocks() const noexcept { return open_; }

 private:
  friend class LoopBody;
  Graph graph_;
  std::vector<BlockId> open_;
  std::vector<char> block_open_;
  std::vector<char> scope_alive_;
  std::vector<SourceLoc> scope_loc_;
  SourceLoc attribute_to_;
  std::vector<ValueId> out_scratch_;
  std::unordered_map<ViewId, std::string> view_errors_;
  bool effects_traced_ = false;
  static std::size_t pure_hash(const Primitive& p, std::span<const ValueId> inputs,
                               std::span<const std::int64_t> attrs) {
    std::size_t h = 0xcbf29ce484222325ULL ^ reinterpret_cast<std::uintptr_t>(&p);
    const auto mix = [&](std::uint64_t x) { h = (h ^ x) * 0x100000001b3ULL; };
    mix(inputs.size());
    for (ValueId v : inputs) mix(static_cast<std::uint64_t>(v));
    for (std::int64_t a : attrs) mix(static_cast<std::uint64_t>(a));
    return h;
  }
  /// The CSE index. An op with operands is filed under its first operand, a
  /// value usually made a few ops before and so in cache: at a million ops a
  /// global hash table costs a cache miss per op, this costs none. Lists are
  /// walked newest first for at most `max_walk` ops (a value with more pure
  /// users than that only loses some deduplication). Operand-less ops
  /// (constants) go into a small flat hash table.
  class PureOps {
   public:
    template <class Same>
    OpId find(std::span<const ValueId> inputs, std::size_t hash, Same&& same) const {
      if (inputs.empty()) return by_hash_find(hash, same);
      const auto v = static_cast<std::size_t>(inputs.front());
      OpId o = v < newest_.size() ? newest_[v] : no_id;
      for (int walked = 0; o != no_id && walked < max_walk; o = older_[static_cast<std::size_t>(o)], ++walked)
        if (same(o)) return o;
      return no_id;
    }
    void add(std::span<const ValueId> inputs, std::size_t hash, OpId op) {
      if (inputs.empty()) return by_hash_add(hash, op);
      const auto v = static_cast<std::size_t>(inputs.front());
      if (v >= newest_.size()) newest_.resize(std::max(2 * newest_.size(), v + 1), no_id);
      if (static_cast<std::size_t>(op) >= older_.size())
        older_.resize(std::max(2 * older_.size(), static_cast<std::size_t>(op) + 1), no_id);
      older_[static_cast<std::size_t>(op)] = newest_[v];
      newest_[v] = op;
    }

   private:
    static constexpr int max_walk = 16;
    struct Slot {
      std::size_t hash = 0;
      OpId op = no_id;
    };
    template <class Same>
    OpId by_hash_find(std::size_t hash, Same& same) const {
      if (slots_.empty()) return no_id;
      for (std::size_t i = home(hash);; i = (i + 1) & mask()) {
        const Slot& s = slots_[i];
        if (s.op == no_id) return no_id;
        if (s.hash == hash) return same(s.op) ? s.op : no_id;
      }
    }
    void by_hash_add(std::size_t hash, OpId op) {
      if (2 * (used_ + 1) > slots_.size()) {
        std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(std::max<std::size_t>(64, 2 * slots_.size())));
        used_ = 0;
        for (const Slot& s : old)
          if (s.op != no_id) by_hash_add(s.hash, s.op);
      }
      for (std::size_t i = home(hash);; i = (i + 1) & mask()) {
        Slot& s = slots_[i];
        if (s.op == no_id) ++used_;
        if (s.op == no_id || s.hash == hash) {
          s = {hash, op};
          return;
        }
      }
    }
    std::size_t mask() const noexcept { return slots_.size() - 1; }
    std::size_t home(std::size_t hash) const noexcept {
      return static_cast<std::size_t>((hash * 0x9e3779b97f4a7c15ULL) >> 32) & mask();
    }
    std::vector<OpId> newest_;  ///< by ValueId: the newest pure op with it as first operand
    std::vector<OpId> older_;   ///< by OpId: the next older pure op with the same first operand
    std::vector<Slot> slots_;   ///< operand-less pure ops by hash (the newest wins a hash)
    std::size_t used_ = 0;
  };
  [[noreturn]] void foreign_handle() const;

  std::uint64_t serial_;
  PureOps pure_ops_;
  SourceLoc last_loc_;
  const Mesh* mesh_ = nullptr;
  std::int64_t collective_id_ = -1;
  PrngState prng_;
  std::vector<OpenLoop> open_loops_;
};

/// Marks a fori_loop body, with its index, as open while it is traced
/// (Tracer::open_loops): random bits drawn in it differ per iteration.
class LoopBody {
 public:
  LoopBody(Tracer& t, BlockId body, ValueId index) : t_(t) { t_.open_loops_.push_back({body, index}); }
  ~LoopBody() { t_.open_loops_.pop_back(); }
  LoopBody(const LoopBody&) = delete;
  LoopBody& operator=(const LoopBody&) = delete;

 private:
  Tracer& t_;
};

#if REFX_DEFINITIONS
REFX_DECL Tracer::Tracer() : block_open_{1}, scope_alive_{1} {
  static std::atomic<std::uint64_t> traces{0};
  serial_ = traces.fetch_add(1, std::memory_order_relaxed) + 1;
  open_.push_back(0);
  scope_loc_.emplace_back();
}

REFX_DECL void Tracer::foreign_handle() const {
  trace_error_near(near(),
                   hint("a handle is valid only in the trace that made it: pass the data in as a kernel argument "
                        "instead of keeping the handle"),
                   "a Ref, Value, semaphore or copy descriptor made by another trace (another kernel, or an earlier "
                   "compile) is used here");
}

REFX_DECL Tracer*& Tracer::current_slot() noexcept {
  thread_local Tracer* t = nullptr;
  return t;
}

REFX_DECL Tracer& Tracer::current(SourceLoc loc) {
  Tracer* t = current_slot();
  if (t == nullptr)
    trace_error(loc, hint("call it from inside a kernel, run_state or run_scoped body"),
                "a traced operation was used outside of a trace");
  return *t;
}

REFX_DECL BlockId Tracer::open_block() {
  const BlockId b = graph_.add_block();
  block_open_.push_back(1);
  open_.push_back(b);
  return b;
}

REFX_DECL ValueId Tracer::add_param(ValueType t, std::int32_t scope) {
  const BlockId b = current_block();
  const ValueId v = graph_.add_value(ValueInfo{std::move(t), no_id, b, scope});
  graph_.mutable_block(b).params.push_back(v);
  return v;
}

REFX_DECL void Tracer::check_value(ValueId v, SourceLoc loc) const {
  if (v < 0 || static_cast<std::size_t>(v) >= graph_.num_values())
    trace_error(loc.known() ? loc : near(), hint("assign it from a traced operation first"),
                "an empty (default-constructed) Value or Ref is used");
  const ValueInfo& info = graph_.value(v);
  if (!block_open_[static_cast<std::size_t>(info.block)])
    trace_error(loc.known() ? loc : near(), hint("return it from the body instead"),
                "a Value defined inside a fori_loop, when or scope body is used outside that body");
}

REFX_DECL void Tracer::check_ref(ValueId ref, SourceLoc loc) const {
  const ValueInfo& info = graph_.value(ref);
  if (!scope_alive_[static_cast<std::size_t>(info.scope)]) {
    const SourceLoc where = scope_loc_[static_cast<std::size_t>(info.scope)];
    trace_error(loc.known() ? loc : near(),
                hint("it was allocated by the run_scoped / run_state {}{}; keep uses of a Ref inside its scope's body",
                     where.known() ? "at " : "body", where.known() ? fmt::format("{}", where) : std::string{}),
                "a Ref is used after its scope ended");
  }
  check_value(ref, loc);
}

REFX_DECL void Tracer::inherit_view_error(ViewId parent, ViewId child, std::string error) {
  if (error.empty()) {
    auto it = view_errors_.find(parent);
    if (it == view_errors_.end()) return;
    error = it->second;
  }
  view_errors_.emplace(child, std::move(error));
}

REFX_DECL void Tracer::check_view(ViewId v, SourceLoc loc) const {
  if (v < 0 || static_cast<std::size_t>(v) >= graph_.num_views())
    trace_error(loc.known() ? loc : near(), hint("assign it from a kernel parameter or a scope first"),
                "an empty (default-constructed) Ref is used");
  check_ref(graph_.view(v).ref, loc);
  for (const DimIndex& d : graph_.dims(graph_.view(v)))  // a traced start (e.g. a loop index) must still be in scope
    if (!d.start.is_static()) check_value(d.start.value, loc);
  if (auto it = view_errors_.find(v); it != view_errors_.end())
    trace_error(loc.known() ? loc : near(), ".at(...): {}", it->second);
}

REFX_DECL std::span<const ValueId> Tracer::bind(const Primitive& p, std::span<const ValueId> inputs,
                                                std::span<const ViewId> views, std::span<const std::int64_t> attrs,
                                                SourceLoc loc) {
  note(loc);
  const SourceLoc at = attribute_to_.known() ? attribute_to_ : loc.known() ? loc : near();
  for (ValueId v : inputs) check_value(v, at);
  for (ViewId v : views) check_view(v, at);
  // Pure ops with equal inputs and attributes are recorded once (CSE):
  // collectives and views compute the same index arithmetic many times.
  // Candidates are the earlier pure ops with the same first operand (see
  // `PureOps`), confirmed against the graph itself.
  const bool pure_candidate = views.empty() && p.control == ControlKind::none && !p.allocates;
  std::size_t hash = 0;
  if (pure_candidate) {
    hash = pure_hash(p, inputs, attrs);
    const auto same = [&](OpId o) {
      const Op& prev = graph_.op(o);
      return prev.prim == &p && std::ranges::equal(graph_.inputs(prev), inputs) &&
             std::ranges::equal(graph_.attrs(prev), attrs) &&
             block_open_[static_cast<std::size_t>(graph_.value(graph_.outputs(prev).front()).block)];
    };
    if (const OpId hit = pure_ops_.find(inputs, hash, same); hit != no_id) return graph_.outputs(graph_.op(hit));
  }
  AbstractContext ctx(graph_, p, inputs, views, attrs, at);
  p.abstract_eval(ctx);
  auto outs = record(p, inputs, views, attrs, ctx.outputs(), ctx.effects(), {}, at);
  if (pure_candidate && ctx.effects().empty() && !outs.empty())
    pure_ops_.add(inputs, hash, static_cast<OpId>(graph_.num_ops() - 1));
  return outs;
}

REFX_DECL ValueId Tracer::bind1(const Primitive& p, std::span<const ValueId> inputs, std::span<const ViewId> views,
                                std::span<const std::int64_t> attrs, SourceLoc loc) {
  const auto outs = bind(p, inputs, views, attrs, loc);
  if (outs.size() != 1)
    trace_error(loc.known() ? loc : near(), "{} produced {} outputs where one was expected", p.name, outs.size());
  return outs.front();
}

REFX_DECL std::span<const ValueId> Tracer::record(const Primitive& p, std::span<const ValueId> inputs,
                                                  std::span<const ViewId> views, std::span<const std::int64_t> attrs,
                                                  std::span<const ValueType> outs, std::span<const Effect> effects,
                                                  std::span<const BlockId> bodies, SourceLoc loc) {
  if (attribute_to_.known()) loc = attribute_to_;
  const BlockId b = current_block();
  const auto op = static_cast<OpId>(graph_.num_ops());
  out_scratch_.clear();
  for (const ValueType& t : outs) out_scratch_.push_back(graph_.add_value(ValueInfo{t, op, b, 0}));
  graph_.add_op({&p, inputs, out_scratch_, attrs, views, effects, bodies, loc});
  graph_.mutable_block(b).ops.push_back(op);
  effects_traced_ = effects_traced_ || !effects.empty();
  for (BlockId body : bodies) graph_.mutable_block(body).owner = op;
  return graph_.outputs(graph_.op(op));
}
#endif  // REFX_DEFINITIONS

/// Ops traced during this object's lifetime are recorded at `loc`, the
/// user's line, not at the line inside refx that traced them: a library
/// collective's axis index and device-id arithmetic belong to its call.
class AttributeTo {
 public:
  explicit AttributeTo(SourceLoc loc) : t_(Tracer::current(loc)), prev_(t_.attribute_to(loc)) {}
  ~AttributeTo() { t_.attribute_to(prev_); }
  AttributeTo(const AttributeTo&) = delete;
  AttributeTo& operator=(const AttributeTo&) = delete;

 private:
  Tracer& t_;
  SourceLoc prev_;
};

/// Makes `t` the thread's active tracer for this object's lifetime.
class ActiveTrace {
 public:
  explicit ActiveTrace(Tracer& t) : prev_(Tracer::current_slot()) { Tracer::current_slot() = &t; }
  ~ActiveTrace() { Tracer::current_slot() = prev_; }
  ActiveTrace(const ActiveTrace&) = delete;
  ActiveTrace& operator=(const ActiveTrace&) = delete;

 private:
  Tracer* prev_;
};

}  // namespace refx::detail
