#pragma once
// The controlled scheduler (docs/runtime.md, "Controlled schedules"): one
// call of a program on one thread, each scheduling point chosen from the
// points enabled at that moment. The points:
//   run(lane)  the lane runs until it has started a copy, sent a signal to
//              another lane, read a semaphore or passed a delay, or until a wait whose
//              count is not there, or to its end; its first run is its
//              entry into the kernel, and the run of a lane whose count has
//              come is a waiter waking;
//   land       a started copy moves its bytes and its semaphores rise;
//   signal     a signal to another lane arrives (one to itself is at once).
// Copies and signals wait as pending points until chosen: in between, their
// source and target may run, enter or leave. The first enabled point is the
// default: the newest copy or signal lands at once, then the lane that
// started it goes on, then the lowest lane that can run (the threaded
// runtime's order for small copies). The checks are the runtime's (the race
// detector as an observer, the exit invariants, deadlock) and two entry
// rules: a copy or a signal (but for a barrier semaphore's) that lands in a
// lane that has not entered (DeviceEntry::apart) or has left. With several
// calls, a lane that has finished one enters the next as a run of its own,
// and a copy or signal of one call landing in another fails, as does a
// semaphore not back to 0 when a lane leaves a call.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include <refx/core/error.hpp>
#include <refx/explore/detail/steps.hpp>
#include <refx/explore/report.hpp>
#include <refx/ir/eval.hpp>
#include <refx/ir/primitives/builtins.hpp>
#include <refx/runtime/array.hpp>
#include <refx/runtime/detail/copy_job.hpp>
#include <refx/runtime/detail/device_scheduler.hpp>
#include <refx/runtime/detail/inline_launch.hpp>
#include <refx/runtime/detail/launch_observer.hpp>
#include <refx/runtime/detail/semaphore_names.hpp>
#include <refx/runtime/program.hpp>
#include <refx/runtime/runtime.hpp>
#include <refx/runtime/worker_pool.hpp>

namespace refx::detail {

class ControlledRun {
 public:
  /// `apart`: lanes enter one by one (DeviceEntry::apart). Holds `args`
  /// (their shards are the parameters' storage) and snapshots the outputs,
  /// which every run restores first.
  ControlledRun(std::shared_ptr<const Program> p, const std::vector<Array>& args, std::vector<bool> inputs, bool apart,
                bool races, std::int32_t calls)
      : shared_(std::move(p)),
        program_(*shared_),
        args_(args),
        apart_(apart),
        races_(races),
        calls_(calls),
        pool_(args.empty() ? nullptr : &args[0].runtime().pool()) {
    const std::int32_t n = program_.mesh.lanes();
    cores_ = program_.mesh.cores();
    for (std::int32_t l = 0; l < n; ++l) lanes_.push_back(std::make_unique<Lane>(*this, l));
    for (auto& l : lanes_) {
      l->ctx = std::make_unique<ExecContext>(program_.graph, *l);
      for (std::size_t i = 0; i < args_.size(); ++i) l->ctx->bind_param(i, args_[i].shard(l->device));
    }
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (!inputs[i])
        for (std::int32_t d = 0; d < program_.mesh.size(); ++d) {
          Buffer& b = args_[i].shard(d);
          initial_.push_back(Output{&b, b.clone(), i, d});
        }
  }

  const Program& program() const noexcept { return program_; }
  /// The outputs' storage (each device's shard of each parameter written).
  std::vector<const Buffer*> outputs() const {
    std::vector<const Buffer*> out;
    for (const Output& o : initial_) out.push_back(o.storage);
    return out;
  }
  /// Output k's parameter and device.
  std::pair<std::size_t, std::int32_t> output_of(std::size_t k) const {
    return {initial_[k].param, initial_[k].device};
  }
  std::int32_t lanes() const noexcept { return static_cast<std::int32_t>(lanes_.size()); }

  /// One schedule: `choose(enabled, step, so_far)` returns the index of
  /// the point to take, or stop_run. `record`: the steps in words;
  /// `footprints`: what each step read and wrote. At most `max_steps` points.
  template <class Choose>
  RunOutcome run(Choose&& choose, bool record, bool footprints = false,
                 std::int64_t max_steps = std::int64_t{1} << 22) {
    footprints_ = footprints;
    reset();
    RunOutcome out;
    for (;;) {
      enabled_points();
      if (enabled_.empty()) break;
      if (static_cast<std::int64_t>(out.choices.size()) >= max_steps) {
        out.failure = RunFailure{ScheduleFailure::Kind::error,
                                 fmt::format("refx: kernel '{}': the schedule passed {} scheduling points without "
                                             "ending (a device that never stops polling?)",
                                             program_.name, max_steps)};
        break;
      }
      const std::size_t i = choose(std::span<const Action>(enabled_), out.choices.size(), std::as_const(out));
      if (i == stop_run) {
        out.stopped = true;
        return out;
      }
      const Action a = enabled_[i];
      out.choices.push_back(static_cast<std::uint32_t>(i));
      out.taken.push_back(a);
      out.issued_by.push_back(-1);
      step_ = static_cast<std::int64_t>(out.choices.size()) - 1;
      for (std::size_t l = 0; l < lane_hash_.size(); ++l) {
        const auto lane_id = static_cast<std::int32_t>(l);
        if (a.kind == Action::Kind::run) {
          if (a.lane == lane_id) lane_hash_[l] = mix(mix(lane_hash_[l], std::exchange(arrived_[l], 0)), key(a));
        } else if (a.lane == lane_id || (a.kind == Action::Kind::land && a.source == lane_id)) {
          arrived_[l] += mix(0, key(a));  // arrivals between two runs of the lane commute
        }
      }
      StepRecord rec;
      rec.action = a;
      if (footprints_) fp_ = &out.footprints.emplace_back();
      out.failure = a.kind == Action::Kind::run ? run_lane_once(lane(a.lane), rec) : deliver(a, rec, out);
      fp_ = nullptr;
      if (record) out.steps.push_back(rec);
      if (out.failure) break;
    }
    for (std::size_t l = 0; l < lane_hash_.size(); ++l)
      out.order_hash = mix(out.order_hash, mix(lane_hash_[l], arrived_[l]));
    if (!out.failure) out.failure = end_checks();
    return out;
  }

  /// The outputs as the run left them: copied into `into` (sized on first use).
  void save_outputs(std::vector<Buffer>& into) const {
    if (into.empty())
      for (const Output& o : initial_) into.push_back(o.storage->clone());
    for (std::size_t i = 0; i < initial_.size(); ++i)
      copy_bytes(into[i].data(), initial_[i].storage->data(), into[i].bytes());
  }
  void restore_outputs(const std::vector<Buffer>& from) {
    for (std::size_t i = 0; i < initial_.size(); ++i)
      copy_bytes(initial_[i].storage->data(), from[i].data(), from[i].bytes());
  }
  /// Whether output k holds the same bytes as `b`.
  bool output_equals(std::size_t k, const Buffer& b) const {
    std::atomic<bool> same{true};
    const std::byte* x = initial_[k].storage->data();
    in_pieces(pool_, static_cast<std::int64_t>(b.bytes()), kPiece, [&](std::int64_t lo, std::int64_t hi) {
      if (same.load(std::memory_order_relaxed) &&
          std::memcmp(x + lo, b.data() + lo, static_cast<std::size_t>(hi - lo)) != 0)
        same.store(false, std::memory_order_relaxed);
    });
    return same.load();
  }

  /// Words for one step (describe_step).
  std::string describe(const StepRecord& r) const { return describe_step(program_, r, calls_, !apart_); }

 private:
  struct Lane;
  struct Pending {
    Action action;
    const Op* op = nullptr;
    std::unique_ptr<CopyJob> job;  // a copy; null: a signal
    std::int64_t* counter = nullptr;
    std::int64_t inc = 0;
    ValueId sem = no_id;
    bool barrier = false;
    std::int64_t issued_by = -1;  // the step
    std::int32_t call = 0;        // its source's
  };

  struct Lane final : ExecEnv {
    Lane(ControlledRun& r, std::int32_t l) : run(r), id(l), cores(r.cores_), device(l / r.cores_), core(l % r.cores_) {}
    std::int32_t device_id() const override { return device; }
    std::int32_t num_devices() const override { return run.program_.mesh.size(); }
    std::int32_t num_cores() const override { return cores; }
    std::int32_t core_index() const override { return core; }
    std::int32_t axis_index(std::string_view axis) const override {
      if (axis == core_axis_name) return core;
      const Mesh& m = run.program_.mesh;
      return m.coord(device, m.axis(axis));
    }
    std::int32_t axis_size(std::string_view axis) const override {
      if (axis == core_axis_name) return cores;
      return run.program_.mesh.axis_size(axis);
    }
    void semaphore_signal(ExecContext&, const Op& op, ValueId sem, std::int64_t index, std::int64_t inc,
                          std::int32_t target) override {
      run.signal(*this, op, target * cores + core, sem, index, inc);
    }
    void core_semaphore_signal(ExecContext&, const Op& op, ValueId sem, std::int64_t index, std::int64_t inc,
                               std::int32_t target_core) override {
      run.signal(*this, op, device * cores + target_core, sem, index, inc);
    }
    bool semaphore_wait(ExecContext&, const Op& op, ValueId sem, std::int64_t index, std::int64_t value) override {
      std::int64_t& c = run.counter(id, sem, index);
      if (run.fp_) run.fp_->read_counters.push_back(&c);
      if (c >= value) {
        c -= value;
        if (run.observer_) run.observer_->on_wait(id, c, value, sem, index);
        return true;
      }
      blocked = true;
      wait = Park{&op, &c, value, sem, index};
      return false;
    }
    std::int64_t semaphore_read(ExecContext& c, ValueId sem, std::int64_t index) override {
      c.yield_after_op();  // what it read may change before it acts on it
      stopped_at = c.current_op();
      std::int64_t& counter = run.counter(id, sem, index);
      if (run.fp_) run.fp_->read_counters.push_back(&counter);
      return counter;
    }
    void copy_start(ExecContext&, const Op& op, const CopyRequest& r) override {
      run.copy(*this, op, r, r.target * cores + core);
    }
    Buffer& barrier_semaphore(std::int64_t collective_id) override {
      auto [it, fresh] = barriers.try_emplace(collective_id, DType::i64, Shape{});
      if (fresh) it->second.fill_zero();
      return it->second;
    }
    bool observes_ops() const override { return run.races_ || run.footprints_; }
    void before_op(ExecContext& c, const Op& op) override {
      if (run.observer_) run.observer_->on_op(id, c, op);
      if (run.fp_ && op.prim != &prim::dma_start && op.prim != &prim::dma_wait)  // copies are their own steps
        for (const Effect& e : c.graph().effects(op)) {
          if (e.view == no_id || !(e.bits & (effect_read | effect_write | effect_accum))) continue;
          const ElementSpan s = element_span(c.resolve(e.view, op.loc));
          if (e.bits & (effect_write | effect_accum)) run.fp_->write(s);
          else run.fp_->read(s);
        }
    }
    // No wall time passes: the strategy decides what happens meanwhile.
    void delay(ExecContext& c, std::int64_t) override {
      c.yield_after_op();
      stopped_at = c.current_op();
    }
    // Performed when reached; what they print is dropped (each schedule would print it again).
    void host_effect(ExecContext&, const Op&, std::unique_ptr<HostEffect> e) override {
      e->perform([](std::string_view) {});
    }

    ControlledRun& run;
    const std::int32_t id, cores, device, core;
    std::unique_ptr<ExecContext> ctx;
    std::unordered_map<std::int64_t, Buffer> barriers;
    bool entered = false, blocked = false, done = false;
    bool between = false;  // it has finished call `call` and not entered the next
    std::int32_t call = 0;
    Park wait;
    std::int64_t sent = 0;           // copies and signals started this run
    const Op* stopped_at = nullptr;  // the op after which it yielded
    char presence = 0;               // its entering and leaving, as a counter (Footprint)
  };

  static std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
  }
  static std::uint64_t key(const Action& a) {
    return (static_cast<std::uint64_t>(a.kind) << 60) ^ (static_cast<std::uint64_t>(a.lane) << 40) ^
           (static_cast<std::uint64_t>(a.source) << 20) ^ static_cast<std::uint64_t>(a.seq + 1);
  }
  Lane& lane(std::int32_t l) { return *lanes_[static_cast<std::size_t>(l)]; }
  static constexpr std::int64_t kPiece = std::int64_t{256} << 10;     // of a restore or comparison
  static constexpr std::int64_t kLandPiece = std::int64_t{64} << 10;  // of a large copy landing
  void copy_bytes(std::byte* to, const std::byte* from, std::size_t bytes) const {
    in_pieces(pool_, static_cast<std::int64_t>(bytes), kPiece, [&](std::int64_t lo, std::int64_t hi) {
      std::memcpy(to + lo, from + lo, static_cast<std::size_t>(hi - lo));
    });
  }

  std::int64_t& counter(std::int32_t l, ValueId sem, std::int64_t index) {
    const Graph& g = program_.graph;
    const ValueInfo& info = g.value(sem);
    if (info.producer != no_id && g.op(info.producer).prim == &prim::barrier_semaphore)
      return lane(l)
          .barrier_semaphore(prim::barrier_semaphore_attrs(g, g.op(info.producer)).collective_id)
          .data<std::int64_t>()[index];
    return lane(l).ctx->storage(sem)->data<std::int64_t>()[index];
  }
  bool is_barrier(ValueId sem) const {
    const ValueInfo& info = program_.graph.value(sem);
    return info.producer != no_id && program_.graph.op(info.producer).prim == &prim::barrier_semaphore;
  }

  void reset() {
    for (Output& o : initial_) copy_bytes(o.storage->data(), o.before.data(), o.before.bytes());
    for (auto& l : lanes_) {
      restart(*l);
      for (auto& [id, b] : l->barriers) b.fill_zero();
      l->entered = !apart_;
      l->blocked = l->done = l->between = false;
      l->call = 0;
      l->sent = 0;
    }
    current_ = -1;
    pending_.clear();
    lane_hash_.assign(lanes_.size(), 0x9e3779b97f4a7c15ull);
    arrived_.assign(lanes_.size(), 0);
    observer_.reset();
    if (races_) observer_ = std::make_unique<RaceObserver>(program_.mesh);
  }

  // The newest copy or signal first, then the lane that stopped after
  // starting one (or reading a semaphore), then the others in order.
  void enabled_points() {
    enabled_.clear();
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) enabled_.push_back(it->action);
    const auto can_run = [&](const Lane& l) {
      if (l.done) return false;
      if (l.between)  // together: each call starts with every device's barrier
        return apart_ || std::all_of(lanes_.begin(), lanes_.end(), [&](const auto& o) {
                 return o->call > l.call || (o->call == l.call && o->between);
               });
      return !l.blocked || *l.wait.counter >= l.wait.wanted;
    };
    if (current_ >= 0 && can_run(lane(current_))) enabled_.push_back(Action::running(current_));
    for (const auto& l : lanes_)
      if (l->id != current_ && can_run(*l)) enabled_.push_back(Action::running(l->id));
  }

  void signal(Lane& from, const Op& op, std::int32_t target, ValueId sem, std::int64_t index, std::int64_t inc) {
    std::int64_t& c = counter(target, sem, index);
    if (observer_) observer_->on_signal(from.id, target, sem, index, c);  // released when sent
    if (target == from.id) {
      c += inc;
      if (fp_) fp_->added_counters.push_back(&c);
      return;
    }
    Pending p;
    p.action = Action::arrival(Action::Kind::signal, target, from.id, from.sent++);
    p.op = &op;
    p.issued_by = step_;
    p.call = from.call;
    p.counter = &c;
    p.inc = inc;
    p.sem = sem;
    p.barrier = is_barrier(sem);
    pending_.push_back(std::move(p));
    from.ctx->yield_after_op();
    from.stopped_at = &op;
  }

  void copy(Lane& from, const Op& op, const CopyRequest& r, std::int32_t target) {
    auto job = std::make_unique<CopyJob>();
    fill_job(*job, r, from.id, target, lane(target).ctx->storage(r.dst_ref));
    job->recv_counter = &counter(target, r.recv_sem, r.recv_index);
    if (r.send_sem != no_id) job->send_counter = &counter(from.id, r.send_sem, r.send_index);
    if (observer_) observer_->on_copy(from.id, op, *job);
    Pending p;
    p.action = Action::arrival(Action::Kind::land, target, from.id, from.sent++);
    p.op = &op;
    p.issued_by = step_;
    p.call = from.call;
    p.job = std::move(job);
    pending_.push_back(std::move(p));
    from.ctx->yield_after_op();
    from.stopped_at = &op;
  }

  // A copy or signal reaching `target`: whether the entry rules allow it.
  std::optional<RunFailure> arrives(const Pending& p) {
    Lane& t = lane(p.action.lane);
    if (fp_ && !p.barrier) fp_->read_counters.push_back(&t.presence);
    if (p.barrier || (t.entered && !t.done && !t.between && t.call == p.call)) return std::nullopt;
    const Mesh& m = program_.mesh;
    const std::string in_call = calls_ > 1 ? fmt::format(" in call {}", p.call + 1) : "";
    const std::string what =
        p.job ? fmt::format("the copy {} started at {}{}", m.describe_lane(p.action.source), p.op->loc, in_call)
              : fmt::format("the signal {} sent at {}{} to {}", m.describe_lane(p.action.source), p.op->loc, in_call,
                            report_semaphore_name(program_.graph, p.sem));
    if (t.entered && !t.done) {
      const bool early = p.call > t.call;
      return RunFailure{
          ScheduleFailure::Kind::carried,
          fmt::format("refx: kernel '{}': {} lands in {} {} call {}: carried from one call into the next ({})",
                      program_.name, what, m.describe_lane(t.id), t.between ? "after it has left" : "during",
                      t.call + 1,
                      early ? "that device is still in an earlier call: synchronise with a barrier semaphore at "
                              "the start of the kernel"
                            : "wait for every copy and signal before the kernel ends")};
    }
    if (!t.entered)
      return RunFailure{ScheduleFailure::Kind::not_entered,
                        fmt::format("refx: kernel '{}': {} lands in {} before it has entered the kernel (its "
                                    "semaphores and buffers may still be another kernel's: synchronise with a "
                                    "barrier semaphore first)",
                                    program_.name, what, m.describe_lane(t.id))};
    return RunFailure{ScheduleFailure::Kind::left,
                      fmt::format("refx: kernel '{}': {} lands in {} after it has left the kernel (wait for it "
                                  "before the kernel ends)",
                                  program_.name, what, m.describe_lane(t.id))};
  }

  // A copy lands or a signal arrives.
  std::optional<RunFailure> deliver(const Action& a, StepRecord& rec, RunOutcome& out) {
    const auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.action.same(a); });
    Pending p = std::move(*it);
    pending_.erase(it);
    out.issued_by.back() = p.issued_by;
    rec.from = p.op;
    rec.call = p.call;
    if (p.job) rec.bytes = p.job->bytes;
    else rec.sem = p.sem;
    if (auto f = arrives(p)) return f;
    if (p.job) {
      CopyJob& job = *p.job;
      if (fp_) {
        fp_->read(element_span(job.src));
        fp_->write(element_span(job.dst));
        fp_->added_counters.push_back(job.recv_counter);
        if (job.send_counter) fp_->added_counters.push_back(job.send_counter);
      }
      if (job.bytes >= 2 * kLandPiece && is_contiguous(job.src) && is_contiguous(job.dst)) {
        const std::int64_t per = kLandPiece / static_cast<std::int64_t>(size_of(job.src.buffer->dtype()));
        in_pieces(pool_, job.src.elements(), per,
                  [&](std::int64_t lo, std::int64_t hi) { copy_contiguous(job.src, job.dst, job.reduce, lo, hi); });
      } else {
        copy_region(job.src, job.dst, job.reduce);
      }
      *job.recv_counter += job.recv_inc;
      if (job.send_counter) *job.send_counter += job.send_inc;
      if (job.reduce != CopyReduce::none) out.accumulations.emplace_back(job.dst.buffer, job.source);
      if (observer_) observer_->on_copy_landed(job);
    } else {
      if (fp_) fp_->added_counters.push_back(p.counter);
      *p.counter += p.inc;
    }
    return std::nullopt;
  }

  std::optional<RunFailure> run_lane_once(Lane& l, StepRecord& rec) {
    rec.entered = !l.entered || l.between;
    if (l.between && apart_) {
      next_call(l);
    } else if (l.between) {  // Pallas' device barrier: every device enters the next call at once
      if (auto f = races_found()) return f;
      if (observer_) observer_ = std::make_unique<RaceObserver>(program_.mesh);  // the call before happened before
      for (auto& o : lanes_) {
        if (fp_ && o.get() != &l) fp_->added_counters.push_back(&o->presence);
        next_call(*o);
      }
    }
    rec.call = l.call;
    rec.from = l.ctx->current_op();
    l.entered = true;
    l.blocked = false;
    std::exception_ptr failure;
    const ExecStatus status = run_lane(*l.ctx, program_.mesh, l.id, failure);
    if (failure) return RunFailure{ScheduleFailure::Kind::error, message_of(failure, "refx: unknown exception")};
    const bool ended = status == ExecStatus::done;
    if (ended && l.call + 1 < calls_) l.between = true;
    else if (ended) l.done = true;
    if (fp_ && (rec.entered || ended)) fp_->added_counters.push_back(&l.presence);
    rec.to = ended ? nullptr : l.blocked ? l.wait.op : l.stopped_at;
    rec.waits = l.blocked;
    current_ = ended || l.blocked ? -1 : l.id;
    if (l.between) return carried_semaphores(l);
    return std::nullopt;
  }

  // The lane's program from its start, on the parameters' storage.
  void restart(Lane& l) {
    l.ctx->reset(l);
    for (std::size_t i = 0; i < args_.size(); ++i) l.ctx->bind_param(i, args_[i].shard(l.device));
  }
  void next_call(Lane& l) {
    restart(l);
    l.between = false;
    ++l.call;
  }

  // A lane leaving a call that is not its last: its semaphores must be back
  // to 0, or the next call would start from what is left (barrier
  // semaphores, which outlive calls, are checked at the end).
  std::optional<RunFailure> carried_semaphores(const Lane& l) const {
    std::string lines = unbalanced_semaphore_lines(
        program_, [&](std::int32_t k) { return k == l.id ? l.ctx.get() : nullptr; },
        [](std::int32_t, std::int64_t) -> const Buffer* { return nullptr; });
    if (lines.empty()) return std::nullopt;
    return RunFailure{ScheduleFailure::Kind::carried,
                      fmt::format("refx: kernel '{}': {} leaves call {} with semaphores not back to 0, which the "
                                  "next call would start from (every signal must be waited and every copy "
                                  "waited):\n{}",
                                  program_.name, program_.mesh.describe_lane(l.id), l.call + 1, lines)};
  }

  std::optional<RunFailure> end_checks() {
    std::vector<std::string> parked;
    for (const auto& l : lanes_) {
      if (l->done) continue;
      if (l->between) {
        parked.push_back(fmt::format("  {}: has finished call {} and waits for every device to finish it",
                                     program_.mesh.describe_lane(l->id), l->call + 1));
        continue;
      }
      const Park& p = l->wait;
      parked.push_back(fmt::format("  {}: {} on {}{} has {}, wants {} (at {})", program_.mesh.describe_lane(l->id),
                                   p.op->prim->name, report_semaphore_name(program_.graph, p.sem),
                                   program_.graph.type(p.sem).shape.rank() ? fmt::format("[{}]", p.index) : "",
                                   *p.counter, p.wanted, p.op->loc));
    }
    if (!parked.empty())
      return RunFailure{ScheduleFailure::Kind::deadlock,
                        fmt::format("refx: deadlock in kernel '{}' on mesh {}: no device can make progress, no copy "
                                    "is in flight\n{}",
                                    program_.name, program_.mesh.describe(), fmt::join(parked, "\n"))};
    if (std::string lines = unbalanced_semaphore_lines(
            program_, [&](std::int32_t l) { return lane(l).ctx.get(); },
            [&](std::int32_t l, std::int64_t id) -> const Buffer* { return &lane(l).barrier_semaphore(id); });
        !lines.empty())
      return RunFailure{ScheduleFailure::Kind::unbalanced, unbalanced_semaphores_message(program_, lines)};
    return races_found();
  }

  std::optional<RunFailure> races_found() {
    if (!observer_) return std::nullopt;
    std::exception_ptr error;
    observer_->on_end(program_, error);
    if (error) return RunFailure{ScheduleFailure::Kind::race, message_of(error, "refx: data race")};
    return std::nullopt;
  }

  std::shared_ptr<const Program> shared_;
  const Program& program_;
  std::vector<Array> args_;
  const bool apart_, races_;
  const std::int32_t calls_;
  std::int32_t cores_ = 1;
  std::vector<std::unique_ptr<Lane>> lanes_;
  struct Output {
    Buffer* storage;  // a device's shard of an output parameter
    Buffer before;    // its value before the call
    std::size_t param;
    std::int32_t device;
  };
  std::vector<Output> initial_;
  WorkerPool* pool_ = nullptr;    // the Arrays' runtime's workers (restore and compare)
  std::vector<Pending> pending_;  // copies and signals on their way, in the order sent
  std::vector<Action> enabled_;
  std::int32_t current_ = -1;  // the lane that stopped after starting a copy or a signal
  std::unique_ptr<RaceObserver> observer_;
  bool footprints_ = false;
  Footprint* fp_ = nullptr;
  std::int64_t step_ = -1;                          // the step being taken
  std::vector<std::uint64_t> lane_hash_, arrived_;  // RunOutcome::order_hash, per lane
};

}  // namespace refx::detail
