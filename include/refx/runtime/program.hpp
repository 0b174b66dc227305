#pragma once
// What the runtime executes: a verified, scheduled graph for a mesh.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <refx/config.hpp>
#include <refx/core/mesh.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/printer.hpp>
#include <refx/ir/primitives/builtins.hpp>

namespace refx {

class ExecContext;  // ir/eval.hpp
namespace detail {
class BoundPlan;  // runtime/detail/bound_launch.hpp
}  // namespace detail

/// The device states (ExecContexts, with their scoped storage, value buffers
/// and kept results) of a program's last finished launch, one per device,
/// kept for its next launch so that a call allocates none. Scratch stays
/// allocated between calls, as a TPU kernel's is static. A device gets its
/// own state back: what it computed once (ExecContext::reset) stands.
class ContextCache {
 public:
  ~ContextCache();
  /// Device d's state to reset() and reuse, or null.
  std::unique_ptr<ExecContext> take(std::int32_t device);
  /// Keeps device d's finished state (its semaphores back to 0).
  void give(std::int32_t device, std::unique_ptr<ExecContext> c);

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<ExecContext>> by_device_;
};

/// A program's bound form (runtime/detail/bound_launch.hpp): recorded at the
/// first launch that may run bound, then kept; null if the program does not bind.
class BoundCache {
 public:
  template <class Record>
  detail::BoundPlan* get(Record&& record) {
    std::call_once(once_, [&] { plan_ = record(); });
    return plan_.get();
  }

 private:
  std::once_flag once_;
  std::shared_ptr<detail::BoundPlan> plan_;
};

struct Program {
  Graph graph;
  Mesh mesh;
  std::string name = "kernel";
  /// Collective ids of the barrier semaphores the program uses.
  std::vector<std::int64_t> barrier_ids;
  /// Kernel::collective_id, -1 if none was given: a kernel that synchronises
  /// its devices itself (refx::explore lets them enter apart).
  std::int64_t collective_id = -1;
  /// The bytes of the program's largest copy or computed value, and whether
  /// it loops: the runtime runs programs without loops whose data is all
  /// small on one worker at a time (RuntimeOptions::single_worker_bytes).
  std::int64_t max_data_bytes = 0;
  bool loops = false;
  /// Kernel::single_worker: one worker at a time whatever the size and loops.
  bool single_worker = false;
  /// Whether the program only computes on one device: one lane, no loop, no
  /// semaphore, copy or host effect. Such a call may run on the calling
  /// thread (RuntimeOptions::inline_launch_bytes) if its largest value or
  /// Ref and its dots' multiply-adds are small.
  bool computes_only = false;
  std::int64_t max_ref_or_value_bytes = 0;
  std::int64_t dot_macs = 0;
  /// The program compiled without passes::forward_copies, when that pass
  /// forwarded a copy (null otherwise: the program is as written). A TPU
  /// moves every copy the kernel wrote, so predict() and refx::explore run
  /// this one (Executable::written_program).
  std::shared_ptr<const Program> as_written;
  /// Reused between launches (declared last: destroyed before the graph).
  mutable ContextCache contexts;
  mutable BoundCache bound;

  Program(Graph g, Mesh m, std::string n, bool one_worker = false);
};

/// Counters of one launch (and, summed, of a runtime).
struct LaunchStats {
  /// The copies the kernel made and their bytes, as it wrote them: a copy
  /// passes::forward_copies forwarded counts too, though no byte of it moved.
  std::int64_t bytes_copied = 0;
  std::int64_t copies = 0;
  std::int64_t parks = 0;
  std::int64_t wakeups = 0;
  /// Device states the launch had to build: 0 when it reused those of the
  /// program's previous launch (ContextCache).
  std::int64_t contexts_built = 0;
  /// Launches that ran bound (RuntimeOptions::bound_launch_bytes).
  std::int64_t bound = 0;
  /// Launches that ran inline (RuntimeOptions::inline_launch_bytes).
  std::int64_t inlined = 0;
  /// How many of `copies` were forwarded (last: a new counter keeps the
  /// others' positions).
  std::int64_t forwarded = 0;
};

#if REFX_DEFINITIONS
}  // namespace refx

#include <refx/ir/eval.hpp>
#include <refx/runtime/effect_info.hpp>

namespace refx {

REFX_DECL ContextCache::~ContextCache() = default;

REFX_DECL std::unique_ptr<ExecContext> ContextCache::take(std::int32_t device) {
  std::lock_guard lock(mutex_);
  const auto d = static_cast<std::size_t>(device);
  return d < by_device_.size() ? std::move(by_device_[d]) : nullptr;
}

REFX_DECL void ContextCache::give(std::int32_t device, std::unique_ptr<ExecContext> c) {
  std::lock_guard lock(mutex_);
  const auto d = static_cast<std::size_t>(device);
  if (d >= by_device_.size()) by_device_.resize(d + 1);
  by_device_[d] = std::move(c);
}

REFX_DECL Program::Program(Graph g, Mesh m, std::string n, bool one_worker)
    : graph(std::move(g)), mesh(std::move(m)), name(std::move(n)), single_worker(one_worker) {
  for (std::size_t o = 0; o < graph.num_ops(); ++o) {
    const Op& op = graph.op(static_cast<OpId>(o));
    if (op.prim == &prim::barrier_semaphore) {
      const std::int64_t id = prim::barrier_semaphore_attrs(graph, op).collective_id;
      if (std::find(barrier_ids.begin(), barrier_ids.end(), id) == barrier_ids.end()) barrier_ids.push_back(id);
    }
    if (op.prim == &prim::fori_loop) loops = true;
    if (op.prim == &prim::dma_start) {
      const ViewId src = graph.views(op)[0];
      const std::int64_t bytes =
          graph.view_elements(src) * static_cast<std::int64_t>(size_of(graph.type(graph.view(src).ref).dtype));
      max_data_bytes = std::max(max_data_bytes, bytes);
    }
    for (ValueId v : graph.outputs(op))
      if (const ValueType& t = graph.type(v); !t.is_ref())
        max_data_bytes = std::max(max_data_bytes, t.shape.num_elements() * static_cast<std::int64_t>(size_of(t.dtype)));
  }
  // The pool keeps ops that passes replaced: count the dots of the program's
  // blocks (the kernel body is block 0).
  const auto count_dots = [&](const auto& self, BlockId b) -> void {
    for (OpId o : graph.block(b).ops) {
      const Op& op = graph.op(o);
      if (op.prim == &prim::dot) {
        const auto in = graph.inputs(op);
        const Shape &lhs = graph.type(in[0]).shape, &rhs = graph.type(in[1]).shape;  // [m, k]; [k, n] or [n, k]
        if (lhs[1] > 0) dot_macs += lhs.num_elements() * (rhs.num_elements() / lhs[1]);
      }
      for (BlockId body : graph.bodies(op)) self(self, body);
    }
  };
  count_dots(count_dots, BlockId{0});
  for (std::size_t v = 0; v < graph.num_values(); ++v)
    if (const ValueType& t = graph.type(static_cast<ValueId>(v)); !t.is_semaphore())
      max_ref_or_value_bytes =
          std::max(max_ref_or_value_bytes, t.shape.num_elements() * static_cast<std::int64_t>(size_of(t.dtype)));
  // Pure: no semaphore, copy, barrier semaphore or host effect.
  computes_only = mesh.lanes() == 1 && !loops && effect_info(graph).level == SideEffectLevel::pure;
}

#endif  // REFX_DEFINITIONS

}  // namespace refx
