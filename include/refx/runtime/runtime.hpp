#pragma once
// The threaded multi-device runtime: a worker pool, the launch queue (one
// program runs on its mesh at a time, in dispatch order), and the state that
// outlives a launch (barrier semaphores, counters, the print sink). Dispatch
// also keeps the calling thread's effect tokens (docs/effects.md): a runtime
// token per ordered effect kind and an output token per device, which
// effects_barrier() waits for.
//
// Here: the class and its declarations. Its definitions, and those of the
// launch they run (detail/launch.hpp and the launch_*.hpp files), come at
// the end, in header-only builds and in librefx (REFX_DEFINITIONS): a
// translation unit built against refx::compiled that makes its own Runtime
// parses none of them (docs/compile-time.md).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <refx/config.hpp>
#include <refx/runtime/detail/declarations.hpp>
#include <refx/runtime/detail/launch_request.hpp>
#include <refx/runtime/effects.hpp>
#include <refx/runtime/options.hpp>
#include <refx/runtime/timeline.hpp>
#include <refx/runtime/worker_pool.hpp>
#include <refx/transport/transport.hpp>

namespace refx {

class Array;  // array.hpp

namespace detail {
class BoundPlan;         // detail/bound_launch.hpp
class Launch;            // detail/launch.hpp
class TimelineRecorder;  // detail/timeline_recorder.hpp
}  // namespace detail

// A Runtime is the LaunchHost of its launches (privately: users never call
// record / launch_finished); a launch gets everything else in its context.
class Runtime : private detail::LaunchHost {
 public:
  explicit Runtime(RuntimeOptions o = {});
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime();

  /// The process-wide runtime used by default. In a program linked with
  /// refx::mpi (transport::default_remote() set) and started by mpirun, it
  /// spreads every mesh over the ranks (docs/transport.md); otherwise it is
  /// in-process.
  static Runtime& global();
  static RuntimeOptions global_options();

  const RuntimeOptions& options() const noexcept { return options_; }
  WorkerPool& pool() noexcept { return pool_; }

  /// The transport to other processes, or null (in-process).
  transport::Remote* remote() const noexcept { return remote_.get(); }
  /// This process's rank and the number of ranks (0 and 1 in-process).
  int rank() const noexcept { return placement_.rank; }
  int ranks() const noexcept { return placement_.ranks; }
  /// Whether this process hosts `device` of a mesh of `devices`, and which rank does.
  bool hosts(std::int32_t device, std::int32_t devices) const noexcept override {
    return placement_.hosts(device, devices);
  }
  int owner(std::int32_t device, std::int32_t devices) const noexcept override {
    return placement_.owner(device, devices);
  }

  /// Queues a launch; it starts when every earlier launch has finished and
  /// its `inputs` (Arrays from unfinished or failed calls) are ready.
  /// `fx` describes its effects (Executable passes it; else it is computed
  /// from the graph): a launch with ordered effects takes and replaces this
  /// thread's runtime tokens of those kinds, one with host effects or without
  /// outputs replaces the output tokens of its devices. The host does not
  /// wait for other launches. Returns the launch's event.
  std::shared_ptr<Event> enqueue(std::shared_ptr<const Program> p, std::vector<std::vector<Buffer*>> args,
                                 std::vector<std::shared_ptr<const void>> keep_alive, LaunchEffects fx = {},
                                 std::vector<InputDependency> inputs = {});
  /// The same on Arrays, one per kernel parameter (an Executable's call),
  /// which the launch holds until it ends. A program that binds runs bound
  /// (RuntimeOptions::bound_launch_bytes), device 0 on the calling thread.
  std::shared_ptr<Event> enqueue(const std::shared_ptr<const Program>& p, const std::vector<Array>& args,
                                 LaunchEffects fx = {}, std::vector<InputDependency> inputs = {});

  /// Waits until every queued launch has finished (errors stay with their Arrays).
  void drain();

  /// Where debug_print text goes (programs dispatched from now on): one call
  /// per print, never two at once. An empty function restores stdout.
  void set_print_sink(PrintSink sink);

  /// Waits until every effect of the programs this thread dispatched has
  /// happened: its runtime tokens (one per ordered effect kind), its output
  /// tokens (one per device: the latest program with host effects or without
  /// outputs) and every program without outputs since the last barrier. Then
  /// clears that state and rethrows the first failure among them (in dispatch
  /// order), so a failure is reported once and later programs start clean.
  void effects_barrier();

  /// This thread's runtime token of an ordered effect kind (invalid if no
  /// program with that kind was dispatched since the last barrier).
  RuntimeToken runtime_token(OrderedEffect kind);
  /// This thread's output tokens, one per device (invalid where none).
  std::vector<RuntimeToken> output_tokens();

  /// The persistent barrier semaphore of (device, collective id).
  Buffer& barrier(std::int32_t device, std::int64_t collective_id) override;

  /// Starts recording a timeline of the launches dispatched from now on (see
  /// docs/runtime.md, "Timeline"); a recording already on goes on.
  void start_timeline();
  /// Waits for the launches dispatched so far, stops recording and returns
  /// the recording (empty if none was on): `json()` is Chrome Trace Event
  /// JSON for ui.perfetto.dev and chrome://tracing, `write(path)` saves it.
  /// REFX_TRACE_FILE's recording of the whole process is not affected.
  Timeline stop_timeline();
  /// True while start_timeline()'s recording is on.
  bool recording_timeline() const;

  LaunchStats totals() const;
  std::int64_t launches() const;

 private:
  void record(const LaunchStats& s) override;
  // A recorded launch completed: hand it to the recordings still on; stop
  // recording launches once every recording is full.
  void timeline_finished(std::unique_ptr<detail::LaunchTimeline> t, const std::exception_ptr& error);
  void launch_finished() override;
  /// Runs `p` on `args` bound (detail/bound_launch.hpp) if it may: its
  /// event, or null (launch it through the queue).
  std::shared_ptr<Event> run_bound(const std::shared_ptr<const Program>& p, const std::vector<Array>& args,
                                   const std::vector<InputDependency>& inputs);
  /// Runs `p` on `args` on this thread (a program that only computes, on
  /// one device: detail/inline_launch.hpp) if it may: its event, or null.
  std::shared_ptr<Event> run_inline(const std::shared_ptr<const Program>& p, const std::vector<Array>& args,
                                    const std::vector<InputDependency>& inputs);
  /// Whether a call of `p` may skip the queue at all (run bound or inline):
  /// no checked mode, recording, transport or effect to order, not called
  /// from a worker or an effect callback, Arrays of the parameters' types.
  bool may_skip_queue(const Program& p, const std::vector<Array>& args, const LaunchEffects& fx) const;
  /// How long a call that may run bound waits for a bound run still ending
  /// (its dependency, or the run holding the runtime) before it takes the
  /// queue: the tail of one device's copies of at most bound_launch_bytes.
  static constexpr std::chrono::microseconds bound_wait{100};
  void bound_finished(const detail::BoundPlan& plan, std::shared_ptr<Event> event) override;
  /// The launch to start now that one has finished, or null (the runtime is idle).
  std::shared_ptr<detail::Launch> next_launch_locked();

  static std::uint64_t next_id();

  RuntimeOptions options_;
  const std::uint64_t id_;  // keys the threads' token state (addresses get reused)
  std::shared_ptr<PrintSinkHolder> sink_;
  mutable std::mutex mutex_;
  std::deque<std::shared_ptr<detail::Launch>> queue_;
  std::shared_ptr<Event> last_;
  // What holds the runtime, and the event of the latest bound run (only
  // compared). Written under mutex_; calls that may run bound read them
  // without it.
  enum class Holder : std::uint8_t { none, queued_launch, bound_run, inline_run };
  std::atomic<Holder> holder_{Holder::none};
  std::atomic<const Event*> last_bound_{nullptr};
  std::int64_t launches_ = 0;
  LaunchStats totals_;
  std::map<std::pair<std::int32_t, std::int64_t>, Buffer> barriers_;
  std::shared_ptr<detail::TimelineRecorder> timeline_;                // start_timeline()'s recording
  const std::shared_ptr<detail::TimelineRecorder> process_timeline_;  // REFX_TRACE_FILE's, or null
  std::atomic<bool> timeline_on_{false};                              // either is on and not full
  std::shared_ptr<transport::Remote> remote_;                         // before pool_: outlives the workers
  transport::Placement placement_;
  WorkerPool pool_;  // last: its threads stop before the state they use goes
};

/// The calling thread's runtime token for ordered effects of `kind`.
inline RuntimeToken runtime_token(OrderedEffect kind, Runtime& rt = Runtime::global()) {
  return rt.runtime_token(kind);
}

/// The calling thread's output tokens, one per device.
inline std::vector<RuntimeToken> output_tokens(Runtime& rt = Runtime::global()) { return rt.output_tokens(); }

}  // namespace refx

#if REFX_DEFINITIONS
#include <algorithm>
#include <thread>

#include <refx/runtime/detail/bound_launch.hpp>
#include <refx/runtime/detail/inline_launch.hpp>
#include <refx/runtime/detail/launch.hpp>
#include <refx/runtime/detail/timeline_recorder.hpp>

namespace refx {

REFX_DECL Runtime::Runtime(RuntimeOptions o)
    : options_(o),
      id_(next_id()),
      sink_(std::make_shared<PrintSinkHolder>(detail::print_to_stdout)),
      process_timeline_(detail::process_timeline()),
      remote_(o.transport),
      placement_(remote_ ? remote_->placement() : transport::Placement{}),
      pool_(o.workers != 0 ? o.workers
                           : std::max(1u, std::thread::hardware_concurrency() /
                                              static_cast<unsigned>(std::max(1, placement_.local_ranks))),
            // k ranks on this machine share its cores, so a polling thread
            // gets about 1/k of the wall time: poll k times as long (1 ms
            // of a core each).
            std::chrono::milliseconds(std::clamp(placement_.local_ranks, 1, 8))) {
  if (remote_ && o.detect_races)
    throw Error("refx: RuntimeOptions::detect_races is in-process only (its vector clocks do not cross ranks)");
  if (o.shuffle_seed != 0) pool_.set_shuffle(o.shuffle_seed);
  if (remote_)
    pool_.set_host_helper([r = remote_.get()] { return r->help(); }, [r = remote_.get()] { r->stop_helping(); });
  if (o.record_timeline) timeline_ = std::make_shared<detail::TimelineRecorder>();
  timeline_on_.store(timeline_ || process_timeline_, std::memory_order_relaxed);
}

REFX_DECL Runtime::~Runtime() { drain(); }

REFX_DECL Runtime& Runtime::global() {
  static Runtime rt(global_options());
  return rt;
}

REFX_DECL RuntimeOptions Runtime::global_options() {
  RuntimeOptions o;
  if (const transport::RemoteFactory make = transport::default_remote().load()) o.transport = make();
  return o;
}

REFX_DECL std::shared_ptr<Event> Runtime::enqueue(std::shared_ptr<const Program> p,
                                                  std::vector<std::vector<Buffer*>> args,
                                                  std::vector<std::shared_ptr<const void>> keep_alive, LaunchEffects fx,
                                                  std::vector<InputDependency> inputs) {
  if (!fx.known) fx = LaunchEffects::of(effect_info(p->graph), true);
  const std::int32_t devices = p->mesh.size();
  detail::LaunchContext ctx;
  ctx.host = this;
  ctx.pool = &pool_;
  ctx.options = &options_;
  ctx.runtime = this;
  ctx.event = std::make_shared<Event>(this);
  ctx.inputs = std::move(inputs);
  ctx.remote = remote_.get();
  if (options_.detect_races) ctx.observers.push_back(std::make_unique<detail::RaceObserver>(p->mesh));
  detail::LaunchTimeline* timeline = nullptr;  // numbered below
  if (timeline_on_.load(std::memory_order_relaxed)) {
    auto t = std::make_unique<detail::LaunchTimeline>(p, id_, pool_.size());
    timeline = t.get();
    ctx.observers.push_back(std::make_unique<detail::TimelineObserver>(
        std::move(t), [this](std::unique_ptr<detail::LaunchTimeline> done, const std::exception_ptr& e) {
          timeline_finished(std::move(done), e);
        }));
  }
  const std::shared_ptr<Event> event = ctx.event;
  // Built before the lock: a worker ending the previous launch may be waiting for it.
  auto l = std::make_shared<detail::Launch>(
      detail::LaunchRequest{std::move(p), std::move(args), std::move(keep_alive), fx}, std::move(ctx));
  bool start_now = false;
  {
    std::lock_guard lock(mutex_);
    detail::LaunchDispatch d;
    d.number = ++launches_;
    if (timeline) timeline->set_number(d.number);
    if (fx.host_effects) d.sink = sink_;
    // Before the launch can start: it reads its dependencies in start().
    if (fx.ordered_mask != 0 || fx.output_token())
      detail::thread_tokens(id_).record(RuntimeToken(event, d.number), devices, fx, &d.deps);
    last_ = event;
    l->dispatched(std::move(d));
    if (holder_.load(std::memory_order_relaxed) != Holder::none) {
      queue_.push_back(l);
    } else {
      holder_.store(Holder::queued_launch, std::memory_order_relaxed);
      start_now = true;
    }
  }
  // Setting a launch up is the workers' job: dispatch only queues.
  if (start_now) pool_.push([l] { l->start(); });
  return event;
}

REFX_DECL void Runtime::bound_finished(const detail::BoundPlan& plan, std::shared_ptr<Event> event) {
  std::shared_ptr<detail::Launch> next;
  {
    std::lock_guard lock(mutex_);
    totals_.bytes_copied += plan.bytes();
    totals_.copies += plan.copies();
    ++totals_.bound;
    next = next_launch_locked();
  }
  // The runtime is free before the event is set: a caller woken by it may
  // run bound again at once.
  event->set();
  if (next) pool_.push([next] { next->start(); });
}

REFX_DECL void Runtime::drain() {
  std::shared_ptr<Event> last;
  {
    std::lock_guard lock(mutex_);
    last = last_;
  }
  if (last) {
    try {
      last->wait(&pool_);
    } catch (...) {  // reported through the launch's own outputs
    }
  }
}

REFX_DECL void Runtime::set_print_sink(PrintSink sink) {
  auto holder = std::make_shared<PrintSinkHolder>(sink ? std::move(sink) : PrintSink(detail::print_to_stdout));
  std::lock_guard lock(mutex_);
  sink_ = std::move(holder);
}

REFX_DECL void Runtime::effects_barrier() {
  if (detail::host_effect_runtime() == this)
    throw Error(
        "refx: effects_barrier() called from a debug_print sink or an io_callback would wait for the "
        "program that is calling it; call it on the host after dispatch");
  detail::ThreadTokens& tokens = detail::thread_tokens(id_);
  const std::vector<RuntimeToken> all = tokens.all();
  tokens.clear();
  std::exception_ptr first;
  for (const RuntimeToken& t : all) {
    try {
      t.event()->wait(&pool_);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

REFX_DECL RuntimeToken Runtime::runtime_token(OrderedEffect kind) {
  return detail::thread_tokens(id_).ordered[static_cast<std::size_t>(kind) - 1];
}

REFX_DECL std::vector<RuntimeToken> Runtime::output_tokens() { return detail::thread_tokens(id_).output; }

REFX_DECL Buffer& Runtime::barrier(std::int32_t device, std::int64_t collective_id) {
  std::lock_guard lock(mutex_);
  auto [it, fresh] = barriers_.try_emplace({device, collective_id}, DType::i64, Shape{});
  if (fresh) it->second.fill_zero();
  return it->second;
}

REFX_DECL void Runtime::start_timeline() {
  std::lock_guard lock(mutex_);
  if (!timeline_) timeline_ = std::make_shared<detail::TimelineRecorder>();
  timeline_on_.store(true, std::memory_order_relaxed);
}

REFX_DECL Timeline Runtime::stop_timeline() {
  drain();
  std::shared_ptr<detail::TimelineRecorder> r;
  {
    std::lock_guard lock(mutex_);
    r = std::move(timeline_);
    timeline_.reset();
    timeline_on_.store(process_timeline_ && !process_timeline_->full(), std::memory_order_relaxed);
  }
  return r ? r->take() : Timeline{};
}

REFX_DECL bool Runtime::recording_timeline() const {
  std::lock_guard lock(mutex_);
  return timeline_ != nullptr;
}

REFX_DECL LaunchStats Runtime::totals() const {
  std::lock_guard lock(mutex_);
  return totals_;
}

REFX_DECL std::int64_t Runtime::launches() const {
  std::lock_guard lock(mutex_);
  return launches_;
}

REFX_DECL void Runtime::record(const LaunchStats& s) {
  std::lock_guard lock(mutex_);
  totals_.bytes_copied += s.bytes_copied;
  totals_.copies += s.copies;
  totals_.forwarded += s.forwarded;
  totals_.parks += s.parks;
  totals_.wakeups += s.wakeups;
  totals_.contexts_built += s.contexts_built;
  totals_.bound += s.bound;
  totals_.inlined += s.inlined;
}

REFX_DECL void Runtime::timeline_finished(std::unique_ptr<detail::LaunchTimeline> t, const std::exception_ptr& error) {
  t->finish(error);
  std::shared_ptr<const detail::LaunchTimeline> done(std::move(t));
  std::lock_guard lock(mutex_);
  if (timeline_) timeline_->add(done);
  if (process_timeline_) process_timeline_->add(done);
  timeline_on_.store((timeline_ && !timeline_->full()) || (process_timeline_ && !process_timeline_->full()),
                     std::memory_order_relaxed);
}

REFX_DECL void Runtime::launch_finished() {
  std::shared_ptr<detail::Launch> next;
  {
    std::lock_guard lock(mutex_);
    next = next_launch_locked();
  }
  if (next) pool_.push([next] { next->start(); });
}

REFX_DECL std::shared_ptr<detail::Launch> Runtime::next_launch_locked() {
  if (queue_.empty()) {
    holder_.store(Holder::none, std::memory_order_release);
    return nullptr;
  }
  holder_.store(Holder::queued_launch, std::memory_order_release);
  std::shared_ptr<detail::Launch> next = std::move(queue_.front());
  queue_.pop_front();
  return next;
}

REFX_DECL std::uint64_t Runtime::next_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

REFX_DECL Runtime& detail::global_runtime() { return Runtime::global(); }
REFX_DECL void effects_barrier(Runtime& rt) { rt.effects_barrier(); }

}  // namespace refx

#include <refx/runtime/detail/launch_devices.hpp>  // first: the others need Launch::Device
#include <refx/runtime/detail/launch_start.hpp>
#include <refx/runtime/detail/launch_copies.hpp>
#include <refx/runtime/detail/launch_end.hpp>
#include <refx/runtime/detail/launch_effects.hpp>
#include <refx/runtime/detail/launch_remote.hpp>
#endif  // REFX_DEFINITIONS
