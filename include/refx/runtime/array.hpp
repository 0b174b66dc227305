#pragma once
// Array: one buffer (shard) per device of a mesh, possibly still being
// produced by a launch (a future). Reading it on the host waits.
// With a remote transport (docs/transport.md) only the shards of the devices
// this rank hosts are materialized; the others are empty placeholders, and
// to_host() of such a device is an error naming the rank that has it.

#include <memory>
#include <vector>

#include <refx/config.hpp>
#include <refx/ir/buffer.hpp>
#include <refx/runtime/fwd.hpp>

namespace refx {

class Array {
 public:
  Array() = default;

  /// An array of `shape` per device, uninitialised.
  static Array empty(std::int32_t devices, DType dtype, Shape shape, Runtime& rt = detail::global_runtime());

  /// One shard per device from host data (each of shape `shape`).
  template <Element T>
  static Array from_shards(const std::vector<std::vector<T>>& shards, Shape shape,
                           Runtime& rt = detail::global_runtime()) {
    Array a = empty(static_cast<std::int32_t>(shards.size()), dtype_v<T>, shape, rt);
    for (std::size_t d = 0; d < shards.size(); ++d) {
      if (static_cast<std::int64_t>(shards[d].size()) != shape.num_elements())
        throw Error(fmt::format("refx: Array::from_shards: shard {} has {} elements but the shape {} needs {}", d,
                                shards[d].size(), shape, shape.num_elements()));
      if (!a.is_local(static_cast<std::int32_t>(d))) continue;
      std::copy(shards[d].begin(), shards[d].end(), a.s_->shards[d].template data<T>());
    }
    return a;
  }

  /// Every device's shard filled by `f(device, flat_index)`.
  template <Element T, class F>
  static Array generate(std::int32_t devices, Shape shape, F&& f, Runtime& rt = detail::global_runtime()) {
    Array a = empty(devices, dtype_v<T>, shape, rt);
    for (std::int32_t d = 0; d < devices; ++d) {
      if (!a.is_local(d)) continue;
      T* p = a.s_->shards[static_cast<std::size_t>(d)].template data<T>();
      for (std::int64_t i = 0; i < shape.num_elements(); ++i) p[i] = static_cast<T>(f(d, i));
    }
    return a;
  }

  bool valid() const noexcept { return s_ != nullptr; }
  std::int32_t num_devices() const { return static_cast<std::int32_t>(state().shards.size()); }
  DType dtype() const { return state().dtype; }
  /// The shape of each device's shard.
  const Shape& shape() const { return state().shape; }

  /// Waits until the launch producing this array finished; rethrows its error.
  const Array& block_until_ready() const;
  bool is_ready() const;

  /// Whether this process holds device d's shard (always, in-process).
  bool is_local(std::int32_t device) const;

  /// Device d's shard as host data (waits first). Under MPI, d must be a
  /// device this rank hosts (is_local).
  template <Element T>
  std::vector<T> to_host(std::int32_t device) const {
    check_readable(device);
    block_until_ready();
    return shard(device).to_vector<T>();
  }
  /// Device d's shard. Reading it before the array is ready is a race.
  const Buffer& shard(std::int32_t device) const { return state().shards[index(device)]; }
  Buffer& shard(std::int32_t device) { return state().shards[index(device)]; }

  // For the runtime: the array will be (re)written by the launch behind
  // `ready`, which first waits for the launches still reading it (`readers`,
  // those of other Runtimes included).
  void set_ready_event(std::shared_ptr<Event> e) {
    state().ready = std::move(e);
    state().readers.clear();
  }
  const std::shared_ptr<Event>& ready_event() const { return state().ready; }
  void add_reader(std::shared_ptr<Event> e);
  const std::vector<std::shared_ptr<Event>>& reader_events() const { return state().readers; }
  std::shared_ptr<const void> keep_alive() const { return s_; }
  Runtime& runtime() const { return *state().runtime; }

 private:
  struct State {
    DType dtype = DType::f32;
    Shape shape;
    std::vector<Buffer> shards;
    std::shared_ptr<Event> ready;
    std::vector<std::shared_ptr<Event>> readers;  // launches reading it that may not have finished
    Runtime* runtime = nullptr;
  };
  /// Throws unless device d's shard is in this process.
  void check_readable(std::int32_t device) const;
  std::size_t index(std::int32_t device) const {
    const std::size_t n = state().shards.size();
    if (device < 0 || static_cast<std::size_t>(device) >= n)
      throw Error(fmt::format("refx: device {} is outside this Array, which has {} devices", device, n));
    return static_cast<std::size_t>(device);
  }
  State& state() const {
    if (!s_) throw Error("refx: this Array is empty (default-constructed)");
    return *s_;
  }
  std::shared_ptr<State> s_;
};

#if REFX_DEFINITIONS
}  // namespace refx

#include <refx/runtime/event.hpp>
#include <refx/runtime/runtime.hpp>

namespace refx {

// Runtime's launches on Arrays: defined here, where both are complete.
namespace detail {
/// `args`' storage by device: [d][i] is argument i's shard on device d.
inline std::vector<std::vector<Buffer*>> shards_by_device(const std::vector<Array>& args, std::int32_t devices) {
  std::vector<std::vector<Buffer*>> out(static_cast<std::size_t>(devices));
  for (std::int32_t d = 0; d < devices; ++d) {
    auto& v = out[static_cast<std::size_t>(d)];
    v.reserve(args.size());
    for (const Array& a : args) v.push_back(&const_cast<Array&>(a).shard(d));
  }
  return out;
}
}  // namespace detail

REFX_DECL std::shared_ptr<Event> Runtime::enqueue(const std::shared_ptr<const Program>& p,
                                                  const std::vector<Array>& args, LaunchEffects fx,
                                                  std::vector<InputDependency> inputs) {
  if (!fx.known) fx = LaunchEffects::of(effect_info(p->graph), true);
  if (may_skip_queue(*p, args, fx)) {
    if (auto done = run_bound(p, args, inputs)) return done;
    if (auto done = run_inline(p, args, inputs)) return done;
  }
  std::vector<std::shared_ptr<const void>> keep;
  keep.reserve(args.size() + 1);
  for (const Array& a : args) keep.push_back(a.keep_alive());
  keep.push_back(p);
  return enqueue(p, detail::shards_by_device(args, p->mesh.size()), std::move(keep), fx, std::move(inputs));
}

REFX_DECL bool Runtime::may_skip_queue(const Program& p, const std::vector<Array>& args,
                                       const LaunchEffects& fx) const {
  // Only plain calls: no checked mode, no recording, no transport, nothing
  // to order, and not from a worker or an effect's callback (its thread must
  // not run or spin for devices of its own runtime).
  const bool plain = !remote_ && !options_.detect_races && !options_.lazy_copies && options_.shuffle_seed == 0 &&
                     !timeline_on_.load(std::memory_order_relaxed);
  if (!plain || fx.ordered_mask != 0 || fx.output_token() || pool_.worker_index() >= 0 ||
      detail::host_effect_runtime() == this)
    return false;
  // Both ways run views of the parameters' types: Arrays of others take the
  // queue (and whatever it reports), before anything is claimed.
  const auto params = p.graph.params();
  if (args.size() != params.size()) return false;
  const std::int32_t n = p.mesh.size();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ValueType& t = p.graph.type(params[i]);
    if (!args[i].valid() || args[i].num_devices() != n || args[i].dtype() != t.dtype || !(args[i].shape() == t.shape))
      return false;
  }
  return true;
}

REFX_DECL std::shared_ptr<Event> Runtime::run_inline(const std::shared_ptr<const Program>& p,
                                                     const std::vector<Array>& args,
                                                     const std::vector<InputDependency>& inputs) {
  if (!p->computes_only || static_cast<std::size_t>(p->max_ref_or_value_bytes) > options_.inline_launch_bytes ||
      p->dot_macs > options_.inline_launch_macs)
    return nullptr;
  // Anything unfinished or failed that it depends on: the queue waits for it
  // (or reports it).
  for (const InputDependency& in : inputs)
    if (!in.event->ready() || in.event->error()) return nullptr;
  std::shared_ptr<Event> event;
  {
    std::lock_guard lock(mutex_);
    if (holder_.load(std::memory_order_relaxed) != Holder::none) return nullptr;
    holder_.store(Holder::inline_run, std::memory_order_relaxed);
    ++launches_;
    event = std::make_shared<Event>(this);
    last_ = event;
  }
  bool built = false;
  std::exception_ptr failure;
  {
    detail::InlineDevice env(p->mesh);
    std::unique_ptr<ExecContext> ctx = p->contexts.take(0);
    try {
      if (ctx) {
        ctx->reset(env);
      } else {
        ctx = std::make_unique<ExecContext>(p->graph, env);
        built = true;
      }
      for (std::size_t i = 0; i < args.size(); ++i) ctx->bind_param(i, const_cast<Array&>(args[i]).shard(0));
    } catch (...) {
      failure = std::current_exception();
    }
    // Nothing in a program that only computes waits, so it runs to its end.
    if (!failure && detail::run_lane(*ctx, p->mesh, 0, failure) != ExecStatus::done && !failure)
      failure = std::make_exception_ptr(RuntimeError(fmt::format(
          "refx: kernel '{}': device 0 blocked in a program without semaphores (internal error)", p->name)));
    if (!failure) p->contexts.give(0, std::move(ctx));
  }
  std::shared_ptr<detail::Launch> next;
  {
    std::lock_guard lock(mutex_);
    totals_.contexts_built += built ? 1 : 0;
    ++totals_.inlined;
    next = next_launch_locked();
  }
  event->set(failure);
  if (next) pool_.push([next] { next->start(); });
  return event;
}

REFX_DECL std::shared_ptr<Event> Runtime::run_bound(const std::shared_ptr<const Program>& p,
                                                    const std::vector<Array>& args,
                                                    const std::vector<InputDependency>& inputs) {
  const std::int32_t n = p->mesh.size();
  if (static_cast<std::size_t>(p->max_data_bytes) > options_.bound_launch_bytes ||
      n > static_cast<std::int32_t>(pool_.size()))
    return nullptr;
  detail::BoundPlan* plan =
      p->bound.get([&] { return detail::BoundPlan::record(*p, detail::shards_by_device(args, n)); });
  if (plan == nullptr) return nullptr;
  // Calls dispatched back to back, without a wait between them, find the
  // previous call still ending on a worker: the runtime is not free yet, and
  // if they pass the same Arrays, those depend on it. Through the queue such
  // a call costs several times a bound one: it waits for a bound run to end
  // instead, for at most bound_wait. Anything else unfinished (a launch
  // through the queue, another runtime's) is left to the queue.
  const Event* bound = last_bound_.load(std::memory_order_acquire);
  for (const InputDependency& in : inputs) {
    const Event& e = *in.event;
    if (!e.ready() && (&e != bound || !poll_briefly([&] { return e.ready(); }, bound_wait))) return nullptr;
    if (e.error()) return nullptr;  // the queue reports it
  }
  const auto bound_run = [&] { return holder_.load(std::memory_order_acquire) == Holder::bound_run; };
  if (bound_run()) poll_briefly([&] { return !bound_run(); }, bound_wait);
  std::shared_ptr<Event> event;
  {
    std::lock_guard lock(mutex_);
    if (holder_.load(std::memory_order_relaxed) != Holder::none || !plan->claim()) return nullptr;
    holder_.store(Holder::bound_run, std::memory_order_relaxed);
    ++launches_;
    event = std::make_shared<Event>(this);
    last_ = event;
    last_bound_.store(event.get(), std::memory_order_release);
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    Array& a = const_cast<Array&>(args[i]);
    for (std::int32_t d = 0; d < n; ++d) plan->arg(d, i) = &a.shard(d);
    plan->keep().push_back(a.keep_alive());
  }
  plan->begin(p, event, *this);
  // Device d on worker d - 1: a thread of its own, the same one at every call.
  for (std::int32_t d = 1; d < n; ++d) pool_.push_to(static_cast<unsigned>(d - 1), [plan, d] { plan->run_device(d); });
  plan->run_device(0);
  return event;
}

REFX_DECL Array Array::empty(std::int32_t devices, DType dtype, Shape shape, Runtime& rt) {
  if (devices < 1) throw Error(fmt::format("refx: an Array needs at least one device, got {}", devices));
  (void)dense_bytes(dtype, shape, "an Array's shard");  // negative or overflowing extents
  auto s = std::make_shared<State>();
  s->dtype = dtype;
  s->shape = shape;
  s->runtime = &rt;
  s->shards.reserve(static_cast<std::size_t>(devices));
  for (std::int32_t d = 0; d < devices; ++d)
    if (rt.hosts(d, devices)) s->shards.emplace_back(dtype, shape);
    else s->shards.emplace_back();
  Array a;
  a.s_ = std::move(s);
  return a;
}

REFX_DECL const Array& Array::block_until_ready() const {
  if (state().ready) state().ready->wait(&state().runtime->pool());
  return *this;
}

REFX_DECL void Array::add_reader(std::shared_ptr<Event> e) {
  auto& r = state().readers;
  std::erase_if(r, [](const std::shared_ptr<Event>& x) { return x->ready(); });
  r.push_back(std::move(e));
}

REFX_DECL bool Array::is_ready() const { return !state().ready || state().ready->ready(); }

REFX_DECL bool Array::is_local(std::int32_t device) const { return runtime().hosts(device, num_devices()); }

REFX_DECL void Array::check_readable(std::int32_t device) const {
  index(device);
  if (!is_local(device))
    throw Error(
        fmt::format("refx: Array::to_host({}): device {} lives on MPI rank {}, this is rank {} of {}; "
                    "read it on its own rank (Array::is_local tells which devices are here)",
                    device, device, runtime().owner(device, num_devices()), runtime().rank(), runtime().ranks()));
}
#endif  // REFX_DEFINITIONS

}  // namespace refx
