#pragma once
// Launch (detail/launch.hpp): construction and start. Starting is a sequence
// of calls, one per concern: wait for what it depends on, set up its host
// effects, build its devices, join the transport, hand the devices to the
// scheduler.

#include <refx/runtime/detail/launch_devices.hpp>

namespace refx::detail {

inline Launch::Launch(LaunchRequest&& request, LaunchContext&& context)
    : req_(std::move(request)),
      ctx_(std::move(context)),
      host_(*ctx_.host),
      pool_(*ctx_.pool),
      options_(*ctx_.options),
      observers_(std::move(ctx_.observers)),
      event_(ctx_.event ? std::move(ctx_.event) : std::make_shared<Event>(ctx_.runtime)),
      sched_(*this, pool_, stats_) {
  const std::int32_t n = program().mesh.lanes();
  const auto workers = static_cast<int>(pool_.size());
  // One runner, its devices one after another even with a worker per device,
  // for small programs (no loops, little data: their time is hand-offs
  // between threads, not work) and for those that ask for it
  // (Kernel::single_worker); never with host effects (an io_callback may
  // block its runner).
  const Program& p = program();
  // The cores of a device (Mesh::with_cores) are there to run at once: never "small".
  const bool small =
      !p.loops && static_cast<std::size_t>(p.max_data_bytes) <= options_.single_worker_bytes && p.mesh.cores() == 1;
  const bool one_runner = !req_.effects.host_effects && (p.single_worker || small);
  if ((n > workers || one_runner) && options_.shuffle_seed == 0) sched_.set_max_runners(one_runner ? 1 : workers);
}

inline void Launch::start() {
  // Sized here, on a worker, not at dispatch (the host's time).
  devices_.resize(static_cast<std::size_t>(program().mesh.lanes()));
  sched_.resize(program().mesh.lanes());
  std::exception_ptr early = await_dependencies();
  if (early && !ctx_.remote) return abandon(early);
  prepare_effects();
  // With a remote transport only this rank's devices exist here (the others'
  // slots stay null); every rank still takes part in ending the launch.
  std::int64_t built = 0;
  if (!early) {
    try {
      built = build_devices();
    } catch (...) {
      if (!ctx_.remote) return abandon(std::current_exception());
      early = std::current_exception();
    }
  }
  if (early) {
    for (auto& dev : devices_) dev.reset();
    sched_.unhost_all();
  }
  {
    std::lock_guard lock(sched_.mutex());
    sched_.activate_hosted_locked();
    stats_.contexts_built = built;
  }
  if (ctx_.remote) {
    ctx_.remote->started(dispatch_.number, shared_from_this());  // delivers what arrived early
    if (early) {
      std::unique_lock lock(sched_.mutex());
      fail_locked(early);
      finish_if_idle(lock);
      return;
    }
  }
  sched_.start(options_.shuffle_seed != 0);
}

// Runtime tokens: the previous launches with our ordered effect kinds must
// have finished. With FIFO launches they have (launches run one at a time,
// in dispatch order); a scheduler that overlaps launches must start this one
// only when they are ready. A failed dependency does not fail us; a failed
// input does (wait_for_inputs).
inline std::exception_ptr Launch::await_dependencies() {
  for (const auto& dep : dispatch_.deps) {
    try {
      dep->wait(&pool_);
    } catch (...) {  // reported by the dependency's own outputs / effects_barrier
    }
  }
  dispatch_.deps.clear();
  std::exception_ptr early = ctx_.inputs.empty() ? nullptr : wait_for_inputs();
  if (!early && ctx_.remote && program().mesh.cores() > 1)
    early = std::make_exception_ptr(RuntimeError(fmt::format(
        "refx: kernel '{}': a mesh with {} cores per device runs in-process only (its cores share a device's Hbm)",
        program().name, program().mesh.cores())));
  if (!early && ctx_.remote)
    if (std::string why = ctx_.remote->placement().check(program().mesh.size()); !why.empty())
      early = std::make_exception_ptr(RuntimeError(why));
  return early;
}

inline void Launch::prepare_effects() {
  if (!req_.effects.host_effects) return;
  if (dispatch_.sink) print_ = [sink = dispatch_.sink](std::string_view s) { (*sink)(s); };
  else print_ = print_to_stdout;
  if (req_.effects.ordered_mask != 0 && program().mesh.lanes() > 1) effects_.start(program().mesh.lanes());
}

// With several cores per device, every core of a device is a lane bound to
// the device's arguments: the cores share its Hbm, each has its own scratch.
inline std::int64_t Launch::build_devices() {
  const std::int32_t n = program().mesh.lanes();
  const std::int32_t cores = program().mesh.cores();
  std::int64_t built = 0;
  for (std::int32_t d = 0; d < n; ++d) {
    if (ctx_.remote && !host_.hosts(d, n)) continue;
    std::unique_ptr<ExecContext> reused = program().contexts.take(d);
    if (!reused) ++built;
    auto& dev = devices_[static_cast<std::size_t>(d)] = std::make_unique<Device>(*this, d, std::move(reused));
    const auto& args = req_.args[static_cast<std::size_t>(d / cores)];
    for (std::size_t i = 0; i < args.size(); ++i) dev->ctx->bind_param(i, *args[i]);
    sched_.host(d);
  }
  return built;
}

// Nothing runs: the outputs carry the cause (and so do their consumers').
inline void Launch::abandon(std::exception_ptr error) {
  event_->set(std::move(error));
  host_.launch_finished();
}

}  // namespace refx::detail
