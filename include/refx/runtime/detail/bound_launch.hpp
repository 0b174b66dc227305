#pragma once
// A program's bound form: the launch path of static communication programs
// (RuntimeOptions::bound_launch_bytes; docs/runtime.md, "Bound launches").
//
// A program binds when its every op is a copy, a copy wait, a semaphore
// signal or wait, a scope, a loop or a conditional, or a pure op that reads
// no Ref (index arithmetic, axis_index): then nothing a device does depends
// on data or on a semaphore's count, and each device performs the same
// signals, waits and copies, in the same order, at every call. That sequence
// is recorded once, by running the evaluator on each device against an
// environment that notes every action instead of performing it. At a call,
// each device replays its list on a thread of its own: a copy moves its
// bytes at once and raises its semaphores, a signal adds, a wait polls.
//
// A bound run cannot deadlock or end unbalanced if one play-through does
// not: only a device waits on its own semaphores, and signals and copies
// only add (a program that signals or waits a negative count does not
// bind), so whether every device finishes, and what every counter ends
// at, does not depend on the interleaving. Binding plays the lists through
// once; a program that would deadlock or end with a semaphore not back to 0
// does not bind, and the evaluator's launch reports it as before.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <refx/ir/buffer.hpp>
#include <refx/ir/eval.hpp>
#include <refx/ir/primitives/builtins.hpp>
#include <refx/runtime/detail/copy_job.hpp>
#include <refx/runtime/detail/launch_request.hpp>
#include <refx/runtime/program.hpp>
#include <refx/runtime/worker_pool.hpp>

namespace refx::detail {

class BoundPlan {
 public:
  /// The plan of `p`, recorded against one call's arguments
  /// (`args[device][param]`), or null when the program does not bind.
  static std::unique_ptr<BoundPlan> record(const Program& p, const std::vector<std::vector<Buffer*>>& args);

  std::int32_t devices() const noexcept { return static_cast<std::int32_t>(actions_.size()); }
  /// What one run copies (for LaunchStats).
  std::int64_t copies() const noexcept { return static_cast<std::int64_t>(copies_.size()); }
  std::int64_t bytes() const noexcept { return bytes_; }

  /// Takes the plan for one run; false while another run has it.
  bool claim() noexcept { return !busy_.exchange(true, std::memory_order_acquire); }
  /// A claimed run's arguments, filled in before begin(): device d's storage
  /// for parameter i, and the owners of that storage (one per argument,
  /// appended; held until the run ends). Their room is kept from run to run.
  Buffer*& arg(std::int32_t d, std::size_t i) noexcept { return args_[static_cast<std::size_t>(d) * params_ + i]; }
  std::vector<std::shared_ptr<const void>>& keep() noexcept { return keep_; }
  /// Starts a claimed run of `program` (which owns this plan: the run holds
  /// it). The device that ends last releases the plan, then calls
  /// host.bound_finished(*this, event).
  void begin(std::shared_ptr<const Program> program, std::shared_ptr<Event> event, LaunchHost& host) {
    program_ = std::move(program);
    event_ = std::move(event);
    host_ = &host;
    running_.store(devices(), std::memory_order_release);
  }
  /// Replays device d's list; the device that ends last finishes the run.
  void run_device(std::int32_t d);

 private:
  /// How long a waiting device spins before it yields its core.
  static constexpr std::chrono::microseconds spin_window{20};

  enum class Kind : std::uint8_t { signal, wait, copy };
  struct Action {
    Kind kind;
    std::int32_t counter;  // signal, wait
    std::int64_t value;    // signal: the increment; wait: the count; copy: its index in copies_
  };
  struct Copy {
    ResolvedView src, dst;  // their buffers are the run's arguments
    std::int32_t src_param, dst_param, target;
    CopyReduce reduce;
    std::int32_t recv, send;          // counters; send is -1 when there is none
    std::int64_t bytes;               // what it moves
    std::int64_t recv_inc, send_inc;  // what the counters rise by
  };
  // A counter on a cache line of its own: a device polling its counter must
  // not share the line with a neighbour's.
  struct alignas(64) Counter {
    std::atomic<std::int64_t> value{0};
  };
  class Recorder;
  using CounterIds = std::map<std::tuple<std::int32_t, ValueId, std::int64_t>, std::int32_t>;

  /// Whether every op of `g` is one a plan can record (see the top).
  static bool static_ops(const Graph& g);
  /// Plays the lists through once, each device as far as it can in turn,
  /// on `counters` counters: false if some device would wait for ever or a
  /// counter not end at 0.
  bool plays_through(std::size_t counters) const;

  std::vector<std::vector<Action>> actions_;  // per device
  std::vector<Copy> copies_;
  std::int64_t bytes_ = 0;
  std::unique_ptr<Counter[]> counters_;
  std::atomic<bool> busy_{false};
  std::atomic<std::int32_t> running_{0};
  // The run: its arguments (device-major), their owners, and what ends it.
  std::size_t params_ = 0;
  std::vector<Buffer*> args_;
  std::vector<std::shared_ptr<const void>> keep_;
  std::shared_ptr<const Program> program_;
  std::shared_ptr<Event> event_;
  LaunchHost* host_ = nullptr;
};

/// Notes what a device does instead of doing it: signals, waits (always
/// satisfied) and copies, by counter and parameter. `ok` turns false at
/// anything a plan cannot replay.
class BoundPlan::Recorder final : public ExecEnv {
 public:
  Recorder(BoundPlan& plan, CounterIds& ids, const Program& p, const std::vector<Buffer*>& args, std::int32_t device)
      : plan_(plan), ids_(ids), program_(p), args_(args), device_(device) {}

  bool ok = true;

  std::int32_t device_id() const override { return device_; }
  std::int32_t num_devices() const override { return program_.mesh.size(); }
  std::int32_t axis_index(std::string_view axis) const override {
    return program_.mesh.coord(device_, program_.mesh.axis(axis));
  }
  std::int32_t axis_size(std::string_view axis) const override { return program_.mesh.axis_size(axis); }
  bool poisons_scratch() const override { return false; }
  void semaphore_signal(ExecContext&, const Op&, ValueId sem, std::int64_t index, std::int64_t inc,
                        std::int32_t device) override {
    if (inc < 0) ok = false;  // a count that falls under a waiter's feet: the interleaving would matter
    add(Kind::signal, counter(device, sem, index), inc);
  }
  bool semaphore_wait(ExecContext&, const Op&, ValueId sem, std::int64_t index, std::int64_t value) override {
    if (value < 0) ok = false;
    add(Kind::wait, counter(device_, sem, index), value);
    return true;
  }
  void copy_start(ExecContext&, const Op&, const CopyRequest& r) override {
    Copy c{r.src,
           r.dst,
           -1,
           -1,
           r.target,
           r.reduce,
           counter(r.target, r.recv_sem, r.recv_index),
           -1,
           static_cast<std::int64_t>(r.src.bytes()),
           r.recv_inc,
           r.send_inc};
    const auto params = program_.graph.params();
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (args_[i] == r.src.buffer) c.src_param = static_cast<std::int32_t>(i);
      if (params[i] == r.dst_ref) c.dst_param = static_cast<std::int32_t>(i);
    }
    // Only arguments are bound again at each call: a copy from or to scratch does not bind.
    if (c.src_param < 0 || c.dst_param < 0) ok = false;
    if (r.send_sem != no_id) c.send = counter(device_, r.send_sem, r.send_index);
    plan_.bytes_ += c.bytes;
    plan_.copies_.push_back(c);
    add(Kind::copy, -1, static_cast<std::int64_t>(plan_.copies_.size() - 1));
  }
  // Not reached by a program of static_ops(); refuse rather than guess.
  std::int64_t semaphore_read(ExecContext&, ValueId, std::int64_t) override {
    ok = false;
    return 0;
  }
  void host_effect(ExecContext&, const Op&, std::unique_ptr<HostEffect>) override { ok = false; }

 private:
  static constexpr std::size_t max_actions = std::size_t{1} << 16;

  void add(Kind k, std::int32_t c, std::int64_t value) {
    auto& list = plan_.actions_[static_cast<std::size_t>(device_)];
    if (list.size() >= max_actions) ok = false;
    else list.push_back(Action{k, c, value});
  }
  std::int32_t counter(std::int32_t device, ValueId sem, std::int64_t index) {
    return ids_.try_emplace({device, sem, index}, static_cast<std::int32_t>(ids_.size())).first->second;
  }

  BoundPlan& plan_;
  CounterIds& ids_;
  const Program& program_;
  const std::vector<Buffer*>& args_;
  const std::int32_t device_;
};

inline bool BoundPlan::static_ops(const Graph& g) {
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    const Primitive* p = op.prim;
    const bool comm =
        p == &prim::dma_start || p == &prim::dma_wait || p == &prim::semaphore_signal || p == &prim::semaphore_wait;
    const bool control = p == &prim::scope || p == &prim::fori_loop || p == &prim::when;
    if (!comm && !control && !(p->pure && g.views(op).empty())) return false;
  }
  return true;
}

inline std::unique_ptr<BoundPlan> BoundPlan::record(const Program& p, const std::vector<std::vector<Buffer*>>& args) {
  if (!static_ops(p.graph)) return nullptr;
  auto plan = std::make_unique<BoundPlan>();
  const std::int32_t n = p.mesh.size();
  plan->actions_.resize(static_cast<std::size_t>(n));
  plan->params_ = p.graph.params().size();
  plan->args_.resize(static_cast<std::size_t>(n) * plan->params_);
  plan->keep_.reserve(plan->params_);
  CounterIds ids;
  for (std::int32_t d = 0; d < n; ++d) {
    const auto& mine = args[static_cast<std::size_t>(d)];
    Recorder env(*plan, ids, p, mine, d);
    try {
      ExecContext ctx(p.graph, env);
      for (std::size_t i = 0; i < mine.size(); ++i) ctx.bind_param(i, *mine[i]);
      if (ctx.run() != ExecStatus::done) return nullptr;
    } catch (const std::exception&) {  // the evaluator's launch reports it with the device and line
      return nullptr;
    }
    if (!env.ok) return nullptr;
  }
  if (!plan->plays_through(ids.size())) return nullptr;
  plan->counters_ = std::make_unique<Counter[]>(ids.size());
  return plan;
}

inline bool BoundPlan::plays_through(std::size_t counters) const {
  std::vector<std::int64_t> count(counters, 0);
  std::vector<std::size_t> pc(actions_.size(), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t d = 0; d < actions_.size(); ++d) {
      for (; pc[d] < actions_[d].size(); ++pc[d], moved = true) {
        const Action& a = actions_[d][pc[d]];
        if (a.kind == Kind::signal) {
          count[static_cast<std::size_t>(a.counter)] += a.value;
        } else if (a.kind == Kind::wait) {
          std::int64_t& c = count[static_cast<std::size_t>(a.counter)];
          if (c < a.value) break;
          c -= a.value;
        } else {
          const Copy& c = copies_[static_cast<std::size_t>(a.value)];
          count[static_cast<std::size_t>(c.recv)] += c.recv_inc;
          if (c.send >= 0) count[static_cast<std::size_t>(c.send)] += c.send_inc;
        }
      }
    }
  }
  for (std::size_t d = 0; d < actions_.size(); ++d)
    if (pc[d] != actions_[d].size()) return false;
  return std::all_of(count.begin(), count.end(), [](std::int64_t c) { return c == 0; });
}

inline void BoundPlan::run_device(std::int32_t d) {
  for (const Action& a : actions_[static_cast<std::size_t>(d)]) {
    switch (a.kind) {
      case Kind::signal: counters_[a.counter].value.fetch_add(a.value, std::memory_order_release); break;
      case Kind::wait: {
        std::atomic<std::int64_t>& c = counters_[a.counter].value;
        // Only this device takes from its counters: once the count is there
        // it stays. Every device has a thread, so spin before yielding.
        const auto there = [&] { return c.load(std::memory_order_acquire) >= a.value; };
        spin_on(there, spin_window);
        while (!there()) std::this_thread::yield();
        c.fetch_sub(a.value, std::memory_order_relaxed);
        break;
      }
      case Kind::copy: {
        const Copy& c = copies_[static_cast<std::size_t>(a.value)];
        ResolvedView src = c.src, dst = c.dst;
        src.buffer = arg(d, static_cast<std::size_t>(c.src_param));
        dst.buffer = arg(c.target, static_cast<std::size_t>(c.dst_param));
        copy_region(src, dst, c.reduce);
        counters_[c.recv].value.fetch_add(c.recv_inc, std::memory_order_release);
        if (c.send >= 0) counters_[c.send].value.fetch_add(c.send_inc, std::memory_order_release);
        break;
      }
    }
  }
  if (running_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The last device: release the arguments, then the plan, then finish.
  // `self` holds the program, which owns the plan, until finish returns.
  const std::shared_ptr<const Program> self = std::move(program_);
  std::shared_ptr<Event> event = std::move(event_);
  LaunchHost& host = *host_;
  keep_.clear();
  busy_.store(false, std::memory_order_release);
  host.bound_finished(*this, std::move(event));
}

}  // namespace refx::detail
