#pragma once
// What a launch is given: the request (the program, its arguments, what its
// effects are), the context (its Runtime's services -- LaunchHost, pool,
// options --, its input dependencies, observers, transport) and, once its
// place in the dispatch order is known, its number, print sink and runtime
// tokens (LaunchDispatch). Plain structs: the Runtime fills them in and hands
// them to the Launch's constructor and to dispatched(); nothing reaches into
// the launch otherwise.

#include <cstdint>
#include <memory>
#include <vector>

#include <refx/ir/buffer.hpp>
#include <refx/runtime/effects.hpp>
#include <refx/runtime/event.hpp>
#include <refx/runtime/options.hpp>
#include <refx/runtime/program.hpp>
#include <refx/runtime/worker_pool.hpp>
#include <refx/transport/transport.hpp>

namespace refx::detail {

class BoundPlan;       // detail/bound_launch.hpp
class LaunchObserver;  // detail/launch_observer.hpp

/// One call of a program: what the caller asks for.
struct LaunchRequest {
  std::shared_ptr<const Program> program;
  /// `args[d][i]` is device d's storage for kernel parameter i.
  std::vector<std::vector<Buffer*>> args;
  /// Owners of that storage (Arrays, the program), held until the launch ends.
  std::vector<std::shared_ptr<const void>> keep_alive;
  LaunchEffects effects;
};

/// What a launch needs of the Runtime that runs it. The Runtime implements it
/// (privately); a launch calls it a few times per launch, and barrier() per
/// use of a barrier semaphore.
class LaunchHost {
 public:
  /// The persistent barrier semaphore of (device, collective id).
  virtual Buffer& barrier(std::int32_t device, std::int64_t collective_id) = 0;
  /// Which rank hosts `device` of a mesh of `devices` (0 in-process).
  virtual int owner(std::int32_t device, std::int32_t devices) const noexcept = 0;
  virtual bool hosts(std::int32_t device, std::int32_t devices) const noexcept = 0;
  /// Adds a finished launch's counters to the runtime's totals.
  virtual void record(const LaunchStats& stats) = 0;
  /// The launch has ended (its event is set): the next queued one may start.
  virtual void launch_finished() = 0;
  /// A bound run of `plan` has ended (the plan is released): count it, free
  /// the runtime and set `event`.
  virtual void bound_finished(const BoundPlan& plan, std::shared_ptr<Event> event) = 0;

 protected:
  ~LaunchHost() = default;
};

/// What dispatch adds to a request: the launch's place among the others.
struct LaunchContext {
  LaunchHost* host = nullptr;
  WorkerPool* pool = nullptr;
  const RuntimeOptions* options = nullptr;
  /// The Runtime, as host effects mark it (Event::wait refuses to wait there).
  const void* runtime = nullptr;
  /// Set when the launch ends (made at dispatch: tokens refer to it); null: made by the launch.
  std::shared_ptr<Event> event;
  /// Argument Arrays from unfinished / failed calls, possibly of other Runtimes.
  std::vector<InputDependency> inputs;
  /// Tools watching the launch (timeline, race detector), in the order they
  /// hear of each event; empty: the launch pays one test per signal/copy and
  /// nothing per op.
  std::vector<std::unique_ptr<LaunchObserver>> observers;
  /// Where copies and signals to devices on other ranks go; null in-process.
  transport::Remote* remote = nullptr;
};

/// What the launch's place in the dispatch order decides (under the
/// Runtime's lock, after the launch was built): given before it starts.
struct LaunchDispatch {
  /// This launch's number on its Runtime (the same on every rank).
  std::int64_t number = 0;
  /// The runtime's sink when dispatched (programs with host effects).
  std::shared_ptr<PrintSinkHolder> sink;
  /// Runtime tokens this launch takes (earlier launches with its ordered effects).
  std::vector<std::shared_ptr<Event>> deps;
};

}  // namespace refx::detail
