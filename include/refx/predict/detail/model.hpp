#pragma once
// The definitions of predict.hpp's model (docs/targets.md, "Predicted
// time"): a discrete-event simulation over the compiled graph. Every device
// runs the graph's evaluator (ExecContext) against a PredictEnv; one thread
// steps them in modelled-time order. A device runs until a wait whose count
// the arrivals applied so far do not reach; arrivals (a copy's last byte, a
// remote signal) are events applied in time order, and an event that
// reaches a blocked wait's count resumes its device at that time. Copies
// take their data when started (a race-free program cannot tell) and are
// routed over the torus, one axis after another, reserving each directed
// link for bytes / link bandwidth: transfers that share a link take turns.
// The bytes of a large contiguous copy are moved by the runtime's workers
// in chunks while the model runs on, and the model waits for them when the
// copy lands in modelled time (before anything can see them): the modelled
// times never depend on when the bytes moved.

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <queue>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/core/error.hpp>
#include <refx/ir/eval.hpp>
#include <refx/ir/primitives/builtins.hpp>
#include <refx/ir/view_access.hpp>
#include <refx/passes/cost.hpp>
#include <refx/runtime/array.hpp>
#include <refx/runtime/detail/copy_policies.hpp>
#include <refx/runtime/detail/timeline_json.hpp>
#include <refx/runtime/program.hpp>
#include <refx/runtime/runtime.hpp>

namespace refx::detail {

class PredictModel;

/// One device's hooks: everything goes to the model.
class PredictEnv final : public ExecEnv {
 public:
  PredictEnv(PredictModel& m, std::int32_t d) : model_(&m), device_(d) {}
  std::int32_t device_id() const override { return device_; }
  std::int32_t num_devices() const override;
  std::int32_t axis_index(std::string_view axis) const override;
  std::int32_t axis_size(std::string_view axis) const override;
  void semaphore_signal(ExecContext& ctx, const Op& op, ValueId sem, std::int64_t index, std::int64_t inc,
                        std::int32_t device) override;
  bool semaphore_wait(ExecContext& ctx, const Op& op, ValueId sem, std::int64_t index, std::int64_t value) override;
  std::int64_t semaphore_read(ExecContext& ctx, ValueId sem, std::int64_t index) override;
  void copy_start(ExecContext& ctx, const Op& op, const CopyRequest& r) override;
  Buffer& barrier_semaphore(std::int64_t collective_id) override;
  bool poisons_scratch() const override { return false; }
  bool observes_ops() const override { return true; }
  void before_op(ExecContext& ctx, const Op& op) override;

 private:
  PredictModel* model_;
  std::int32_t device_;
};

class PredictModel {
 public:
  PredictModel(std::shared_ptr<const Program> p, const Target& t, PlacedMesh placed, WorkerPool* pool,
               const RuntimeOptions& o, bool move_data)
      : move_data_(move_data),
        shared_(std::move(p)),
        program_(*shared_),
        graph_(program_.graph),
        target_(t),
        placed_(std::move(placed)),
        pool_(pool),
        options_(o) {
    const std::int32_t n = program_.mesh.size();
    for (std::int32_t d = 0; d < n; ++d) devices_.emplace_back(*this, d);
    for (Device& v : devices_) device_.push_back(&v);
    costs_.reserve(graph_.num_ops());
    for (std::size_t o = 0; o < graph_.num_ops(); ++o) {
      costs_.push_back(passes::op_cost(graph_, static_cast<OpId>(o), t));
      if (costs_.back().unit == OpCost::Unit::vector && scalar_only(graph_.op(static_cast<OpId>(o))))
        costs_.back() = OpCost{};  // index arithmetic: the scalar unit's, not modelled (0 s)
    }
    unknown_.assign(graph_.num_ops(), 0);
    ranks_ = placed_.slice.size();
    chip_stride_.assign(ranks_, 1);
    for (std::size_t x = ranks_; x-- > 1;) chip_stride_[x - 1] = chip_stride_[x] * placed_.slice[x];
    for (std::int32_t d = 0; d < n; ++d) chip_.push_back(placed_.chip(placed_.coords[static_cast<std::size_t>(d)]));
    std::size_t chips = 1;
    for (std::int32_t c : placed_.slice) chips *= static_cast<std::size_t>(c);
    ici_links_ = chips * ranks_ * 2;
    links_.resize(ici_links_ + static_cast<std::size_t>(n));  // then one HBM per device
    first_links_.resize(links_.size());
    // A kernel that sends to another device pays the collective's fixed cost once per call.
    for (std::size_t o = 0; o < graph_.num_ops() && !communicates_; ++o) {
      const Op& op = graph_.op(static_cast<OpId>(o));
      communicates_ = (op.prim == &prim::dma_start && prim::dma_start_attrs(graph_, op).remote) ||
                      (op.prim == &prim::semaphore_signal && graph_.inputs(op).size() == 2);
    }
  }

  Prediction run(const std::vector<Array>& args) {
    // However run ends, no worker may still be moving bytes into the devices' buffers.
    struct Drain {
      PredictModel& m;
      ~Drain() {
        for (const auto& job : m.moving_) m.finish(*job);
      }
    } drain{*this};
    const std::int32_t n = program_.mesh.size();
    for (std::int32_t d = 0; d < n; ++d) {
      Device& v = devices_[static_cast<std::size_t>(d)];
      v.ctx = program_.contexts.take(d);
      if (v.ctx) v.ctx->reset(v.env);
      else v.ctx = std::make_unique<ExecContext>(graph_, v.env);
      for (std::size_t i = 0; i < args.size(); ++i) v.ctx->bind_param(i, const_cast<Array&>(args[i]).shard(d));
      if (communicates_) {
        v.clock = target_.ici.collective_fixed_seconds;
        v.result.fixed_seconds = v.clock;
      }
      push({v.clock, Event::resume, d});
    }
    while (!events_.empty()) {
      const std::uint32_t slot = events_.top().slot;
      events_.pop();
      const Event e = pool_events_[slot];
      free_events_.push_back(slot);
      now_ = e.time;
      if (e.kind == Event::resume) {
        step(e.device);
      } else {
        if (e.job != nullptr) finish(*e.job);
        arrive(e.device, e.counter, e.inc, e);
        if (e.counter2 != nullptr) arrive(e.device2, e.counter2, e.inc2, e);
      }
    }
    for (Device& v : devices_)
      if (!v.done)
        throw RuntimeError(fmt::format(
            "refx: predict: deadlock in modelled time: device {} waits at {} ({}) for a count that no copy or "
            "signal reaches",
            v.env.device_id(), v.current->loc, v.current->prim->name));
    for (std::int32_t d = 0; d < n; ++d)
      program_.contexts.give(d, std::move(devices_[static_cast<std::size_t>(d)].ctx));
    return result();
  }

  // ---- the hooks
  void before_op(std::int32_t d, const Op& op) {
    Device& v = dev(d);
    if (v.resuming) {  // the blocked wait, run again
      v.resuming = false;
      return;
    }
    close_slice(v);
    const auto id = static_cast<OpId>(&op - &graph_.op(0));
    v.current = &op;
    v.begin = v.clock;
    v.waited = false;
    v.woken_copy = v.woken_from = -1;
    const OpCost& c = costs_[static_cast<std::size_t>(id)];
    if (!c.known) ++unknown_[static_cast<std::size_t>(id)];
    if (op.prim == &prim::dma_start) {  // the copy runs beside the device (copy_start), once issued
      v.clock += target_.dma_issue_seconds;
      v.result.busy_seconds += target_.dma_issue_seconds;
      return;
    }
    v.clock += c.seconds;
    v.result.busy_seconds += c.seconds;
  }

  bool wait(std::int32_t d, const Op& op, ValueId sem, std::int64_t index, std::int64_t value) {
    Device& v = dev(d);
    std::int64_t& c = counter(d, sem, index);
    if (c >= value) {
      c -= value;
      return true;
    }
    v.blocked = true;
    v.wait_counter = &c;
    v.wait_value = value;
    v.wait_start = v.clock;
    v.wait_copy = op.prim == &prim::dma_wait;
    return false;
  }

  void signal(std::int32_t d, ValueId sem, std::int64_t index, std::int64_t inc, std::int32_t target) {
    std::int64_t& c = counter(target, sem, index);
    if (target == d) {
      c += inc;
      return;
    }
    const double latency = static_cast<double>(route(d, target, nullptr)) * target_.ici.hop_latency_seconds;
    Event e{dev(d).clock + latency, Event::arrival, target, &c, inc};
    e.from = d;
    push(e);
  }

  void copy(std::int32_t d, const Op& op, const CopyRequest& r) {
    Device& v = dev(d);
    ResolvedView dst = r.dst;
    if (r.target != d) dst.buffer = dev(r.target).ctx->storage(r.dst_ref);
    const auto bytes = static_cast<std::int64_t>(r.src.bytes());
    CopyJob* job = nullptr;
    const bool on_workers = pool_ != nullptr && pool_->size() > 1 &&
                            static_cast<std::size_t>(bytes) > options_.inline_copy_bytes && is_contiguous(r.src) &&
                            is_contiguous(dst);
    if (move_data_ && on_workers) job = move_on_workers(r.src, dst, r.reduce);
    else if (move_data_)
      copy_region(r.src, dst, r.reduce);  // contiguous views straight across, as the runtime moves them
    const auto id = static_cast<OpId>(&op - &graph_.op(0));
    std::vector<std::size_t>& links = links_crossed_;
    links.clear();
    double seconds = 0;
    std::int64_t hops = 0, ring_hops = 0;
    if (r.target != d) v.result.bytes_sent += bytes;
    if (chip_[static_cast<std::size_t>(d)] == chip_[static_cast<std::size_t>(r.target)]) {
      // The device's own HBM, or (TPU7x) the other TensorCore of its chip: at HBM bandwidth.
      const OpCost& c = costs_[static_cast<std::size_t>(id)];
      if (r.target != d || (c.known && c.work > 0)) seconds = static_cast<double>(bytes) / target_.hbm_bytes_per_second;
      links.push_back(hbm_link(d));
    } else {
      hops = route(d, r.target, &links, &ring_hops);
      seconds = static_cast<double>(bytes) / target_.ici.link_rate();
    }
    ++v.result.copies;
    const double start = reserve(links, v.clock, seconds, prim::dma_start_attrs(graph_, op).priority);
    const double arrival = start + seconds + static_cast<double>(hops) * target_.ici.hop_latency_seconds;
    copies_.push_back(PredictedCopy{id, d, r.target, bytes, hops, v.clock, start, arrival, seconds, ring_hops});
    Event e{arrival, Event::arrival, r.target, &counter(r.target, r.recv_sem, r.recv_index), r.recv_inc};
    e.job = job;
    e.copy = static_cast<std::int32_t>(copies_.size() - 1);
    if (r.send_sem != no_id) {
      e.device2 = d;
      e.counter2 = &counter(d, r.send_sem, r.send_index);
      e.inc2 = r.send_inc;
    }
    push(e);
  }

  std::int64_t read(std::int32_t d, ValueId sem, std::int64_t index) { return counter(d, sem, index); }
  Buffer& barrier(std::int32_t d, std::int64_t id) {
    auto [it, fresh] = dev(d).barriers.try_emplace(id, DType::i64, Shape{});
    if (fresh) it->second.fill_zero();
    return it->second;
  }
  const Mesh& mesh() const { return program_.mesh; }

 private:
  struct Device {
    Device(PredictModel& m, std::int32_t d) : env(m, d) {}
    PredictEnv env;
    std::unique_ptr<ExecContext> ctx;
    std::unordered_map<std::int64_t, Buffer> barriers;
    double clock = 0;
    const Op* current = nullptr;
    double begin = 0;
    bool waited = false, resuming = false, done = false;
    bool blocked = false, wait_copy = false;
    std::int64_t* wait_counter = nullptr;
    std::int64_t wait_value = 0;
    double wait_start = 0;
    std::int32_t woken_copy = -1, woken_from = -1;  // what ended the current wait
    DevicePrediction result;
    std::vector<PredictedOp> ops;
  };
  struct Event {
    double time = 0;
    enum Kind : std::uint8_t { arrival, resume } kind = arrival;  // arrivals first at equal times
    std::int32_t device = 0;
    std::int64_t* counter = nullptr;
    std::int64_t inc = 0;
    std::int32_t device2 = 0;
    std::int64_t* counter2 = nullptr;
    std::int64_t inc2 = 0;
    CopyJob* job = nullptr;  // bytes still moving on the workers: done before the arrival counts
    std::int32_t copy = -1;  // the copy that lands (index into copies_), or
    std::int32_t from = -1;  // the device whose signal arrives
  };
  // The queue orders small keys; the events themselves wait in pool_events_.
  struct Key {
    double time;
    Event::Kind kind;
    std::uint32_t slot;
    std::uint64_t seq;
  };
  struct Later {
    bool operator()(const Key& a, const Key& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.kind != b.kind) return a.kind > b.kind;
      return a.seq > b.seq;
    }
  };

  bool scalar_only(const Op& op) const {
    if (!graph_.views(op).empty()) return false;
    for (ValueId v : graph_.inputs(op))
      if (graph_.type(v).shape.rank() != 0) return false;
    for (ValueId v : graph_.outputs(op))
      if (graph_.type(v).shape.rank() != 0) return false;
    return true;
  }
  Device& dev(std::int32_t d) { return *device_[static_cast<std::size_t>(d)]; }

  // Splits the copy into chunks (as the runtime's chunked copies) and offers
  // them to the workers; the model thread takes what is left in finish().
  CopyJob* move_on_workers(const ResolvedView& src, const ResolvedView& dst, CopyReduce reduce) {
    auto job = std::make_shared<CopyJob>();
    job->src = src;
    job->dst = dst;
    job->reduce = reduce;
    job->bytes = static_cast<std::int64_t>(src.bytes());
    split(*job, options_.copy_chunk_bytes);
    const int helpers = std::min(job->chunks, static_cast<int>(pool_->size()));
    for (int h = 0; h < helpers; ++h) pool_->push([job, pool = pool_] { run_chunks(*job, *pool, [] {}); });
    moving_.push_back(job);
    return job.get();
  }
  // Moves the chunks no worker has taken, then waits for those being moved.
  void finish(CopyJob& job) {
    run_chunks(job, *pool_, [] {});
    while (job.remaining.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  }
  void push(const Event& e) {
    std::uint32_t slot = 0;
    if (free_events_.empty()) {
      slot = static_cast<std::uint32_t>(pool_events_.size());
      pool_events_.push_back(e);
    } else {
      slot = free_events_.back();
      free_events_.pop_back();
      pool_events_[slot] = e;
    }
    events_.push(Key{e.time, e.kind, slot, next_seq_++});
  }
  void close_slice(Device& v) {
    if (v.current == nullptr) return;
    v.ops.push_back(PredictedOp{static_cast<OpId>(v.current - &graph_.op(0)), v.begin, v.clock, v.waited,
                                v.waited ? v.woken_copy : -1, v.waited ? v.woken_from : -1});
    v.current = nullptr;
  }

  // Runs device d from now until it blocks or ends.
  void step(std::int32_t d) {
    Device& v = dev(d);
    if (v.blocked) {  // resumed by an arrival: the wait ends now
      const double waited = now_ - v.wait_start;
      v.clock = now_;
      v.result.waiting_seconds += waited;
      if (v.wait_copy) v.result.exposed_communication_seconds += waited;
      v.blocked = false;
      v.resuming = true;
      v.waited = true;
    }
    if (v.ctx->run() == ExecStatus::done) {
      close_slice(v);
      v.done = true;
      v.result.seconds = v.clock;
    }
  }

  void arrive(std::int32_t d, std::int64_t* c, std::int64_t inc, const Event& cause) {
    *c += inc;
    Device& v = dev(d);
    if (v.blocked && v.wait_counter == c && *c >= v.wait_value) {
      v.woken_copy = cause.copy;
      v.woken_from = cause.copy >= 0 ? -1 : cause.from;
      push({std::max(now_, v.wait_start), Event::resume, d});
    }
  }

  std::int64_t& counter(std::int32_t d, ValueId sem, std::int64_t index) {
    const ValueInfo& info = graph_.value(sem);
    const bool is_barrier = info.producer != no_id && graph_.op(info.producer).prim == &prim::barrier_semaphore;
    Buffer* storage = is_barrier
                          ? &barrier(d, prim::barrier_semaphore_attrs(graph_, graph_.op(info.producer)).collective_id)
                          : dev(d).ctx->storage(sem);
    return storage->data<std::int64_t>()[index];
  }

  std::size_t hbm_link(std::int32_t d) const { return ici_links_ + static_cast<std::size_t>(d); }

  // Hops from `from` to `to` between their chips (TorusLayout), one torus
  // axis after another, the shorter way round an axis with wraparound links;
  // appends the directed links crossed to `links` when given, and the hops
  // it would take were every axis a ring to `ring_hops`.
  std::int64_t route(std::int32_t from, std::int32_t to, std::vector<std::size_t>* links,
                     std::int64_t* ring_hops = nullptr) const {
    std::int64_t hops = 0;
    std::int64_t at = chip_[static_cast<std::size_t>(from)];
    const auto& here = placed_.coords[static_cast<std::size_t>(from)];
    const auto& there = placed_.coords[static_cast<std::size_t>(to)];
    for (std::size_t a = 0; a < ranks_; ++a) {
      const std::int32_t size = placed_.slice[a];
      const std::int64_t stride = chip_stride_[a];
      std::int32_t c = here[a];
      const std::int32_t goal = there[a];
      if (c == goal) continue;
      const bool ring = placed_.ring[a];
      std::int32_t dir = goal > c ? 1 : -1, steps = std::abs(goal - c);
      const std::int32_t forward = (goal - c + size) % size;
      if (ring_hops != nullptr) *ring_hops += std::min(forward, size - forward);
      if (ring) {
        dir = forward <= size - forward ? 1 : -1;
        steps = std::min(forward, size - forward);
      }
      for (std::int32_t s = 0; s < steps; ++s) {
        if (links != nullptr) links->push_back(static_cast<std::size_t>(at) * ranks_ * 2 + a * 2 + (dir > 0 ? 1 : 0));
        const std::int32_t next = (c + dir + size) % size;
        at += (next - c) * stride;
        c = next;
      }
      hops += steps;
    }
    return hops;
  }

  // The earliest start at or after `ready` at which every link is free for
  // `seconds`; reserves it.
  // A priority-0 copy finds its gap among priority-0 copies only (it takes
  // the link before priority-1 ones); a priority-1 copy among all. (A
  // priority-1 copy already placed is not moved by one that overtakes it.)
  double reserve(const std::vector<std::size_t>& links, double ready, double seconds, std::int32_t priority) {
    if (seconds <= 0) return ready;
    std::vector<Busy>& among = priority == 0 ? first_links_ : links_;
    double s = ready;
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t l : links) {
        const Busy& busy = among[l];
        const auto it = after(busy, s);
        if (it != busy.begin() && std::prev(it)->second > s) {
          s = std::prev(it)->second;
          moved = true;
        } else if (it != busy.end() && it->first < s + seconds) {
          s = it->second;
          moved = true;
        }
      }
    }
    for (std::size_t l : links) {
      if (priority == 0) first_links_[l].insert(after(first_links_[l], s), {s, s + seconds});
      occupy(links_[l], s, s + seconds);
    }
    return s;
  }
  // A link's busy intervals, sorted and disjoint; the first that begins after `s`.
  using Busy = std::vector<std::pair<double, double>>;
  static Busy::const_iterator after(const Busy& busy, double s) {
    return std::upper_bound(busy.begin(), busy.end(), s, [](double t, const auto& i) { return t < i.first; });
  }
  // Adds [b, e) to `busy`, merging what it overlaps (they stay sorted and disjoint).
  static void occupy(Busy& busy, double b, double e) {
    auto it = after(busy, b);
    if (it != busy.begin() && std::prev(it)->second >= b) {
      --it;
      b = it->first;
    }
    auto last = it;
    while (last != busy.end() && last->first <= e) {
      e = std::max(e, last->second);
      ++last;
    }
    it = busy.erase(it, last);
    busy.insert(it, {b, e});
  }

  Prediction result() {
    Prediction p;
    p.kernel = program_.name;
    p.target = target_.name;
    p.mesh = program_.mesh.describe();
    p.slice = fmt::format("{}", fmt::join(placed_.slice, "x"));
    for (Device& v : devices_) {
      p.devices.push_back(v.result);
      p.ops.push_back(std::move(v.ops));
    }
    p.copies = std::move(copies_);
    p.program_ = shared_;
    p.figures = {target_.ici.link_bytes_per_second, target_.ici.link_rate(),   target_.ici.hop_latency_seconds,
                 target_.hbm_bytes_per_second,      target_.dma_issue_seconds, target_.ici.collective_fixed_seconds,
                 target_.ici.wraparound_multiple};
    for (std::size_t o = 0; o < graph_.num_ops(); ++o) {
      if (unknown_[o] == 0) continue;
      const Op& op = graph_.op(static_cast<OpId>(o));
      std::string source = fmt::format("{}", op.loc);
      const OpCost& c = costs_[o];
      std::string why = c.unit == OpCost::Unit::matrix
                            ? fmt::format("{} has no published matrix-unit peak for {}", target_.name,
                                          graph_.type(graph_.inputs(op)[0]).dtype)
                        : c.unit == OpCost::Unit::vector
                            ? (op.prim == &prim::fused ? std::string("a fused chain: its operations are not counted")
                                                       : fmt::format("{} has no vector_ops_per_second", target_.name))
                            : std::string("a copy between Vmem buffers: no published figure");
      const auto same = [&](const UnknownCost& u) {
        return u.op == op.prim->name && u.source == source && u.reason == why;
      };
      if (auto it = std::find_if(p.unknown.begin(), p.unknown.end(), same); it != p.unknown.end())
        it->count += unknown_[o];
      else p.unknown.push_back(UnknownCost{std::string(op.prim->name), std::move(source), std::move(why), unknown_[o]});
    }
    return p;
  }

  bool move_data_;  // false: predict_times (the copies' bytes stay where they are)
  std::shared_ptr<const Program> shared_;
  const Program& program_;
  const Graph& graph_;
  const Target& target_;
  PlacedMesh placed_;
  std::vector<std::int64_t> chip_stride_;  // per torus axis, in chips of the slice
  std::vector<std::int64_t> chip_;         // per device, its chip's index in the slice
  std::deque<Device> devices_;             // not moved: each holds its env
  std::vector<Device*> device_;            // devices_[d], without the deque's indexing
  std::vector<OpCost> costs_;
  std::vector<std::int64_t> unknown_;  // per op: runs with no figure
  std::size_t ranks_ = 0;
  std::size_t ici_links_ = 0;               // directed ICI links: 2 per torus axis per chip
  bool communicates_ = false;               // a remote copy or signal: the collective's fixed cost
  std::vector<Busy> links_;                 // per directed link, then per device's HBM: busy [begin, end)
  std::vector<Busy> first_links_;           // the same, priority-0 copies only
  std::vector<std::size_t> links_crossed_;  // the current copy's (reused)
  std::vector<PredictedCopy> copies_;
  std::priority_queue<Key, std::vector<Key>, Later> events_;
  std::vector<Event> pool_events_;
  std::vector<std::uint32_t> free_events_;
  WorkerPool* pool_;  // null: every copy on the model's thread
  const RuntimeOptions& options_;
  std::vector<std::shared_ptr<CopyJob>> moving_;  // copies handed to the workers
  std::uint64_t next_seq_ = 0;
  double now_ = 0;
};

inline std::int32_t PredictEnv::num_devices() const { return model_->mesh().size(); }
inline std::int32_t PredictEnv::axis_index(std::string_view axis) const {
  return model_->mesh().coord(device_, model_->mesh().axis(axis));
}
inline std::int32_t PredictEnv::axis_size(std::string_view axis) const { return model_->mesh().axis_size(axis); }
inline void PredictEnv::semaphore_signal(ExecContext&, const Op&, ValueId sem, std::int64_t index, std::int64_t inc,
                                         std::int32_t device) {
  model_->signal(device_, sem, index, inc, device);
}
inline bool PredictEnv::semaphore_wait(ExecContext&, const Op& op, ValueId sem, std::int64_t index,
                                       std::int64_t value) {
  return model_->wait(device_, op, sem, index, value);
}
inline std::int64_t PredictEnv::semaphore_read(ExecContext&, ValueId sem, std::int64_t index) {
  return model_->read(device_, sem, index);
}
inline void PredictEnv::copy_start(ExecContext&, const Op& op, const CopyRequest& r) { model_->copy(device_, op, r); }
inline Buffer& PredictEnv::barrier_semaphore(std::int64_t id) { return model_->barrier(device_, id); }
inline void PredictEnv::before_op(ExecContext&, const Op& op) { model_->before_op(device_, op); }

}  // namespace refx::detail

namespace refx {

namespace detail {
inline Prediction run_prediction(const Executable& exe, const Target& t, const TorusLayout& layout,
                                 const std::vector<Array>& args, refx::source_location loc, bool move_data) {
  validate(t);
  if (exe.mesh().cores() > 1) {
    const Hint h = hint(
        "predict the kernel compiled for the same mesh with one core per device (without "
        ".with_cores({}))",
        exe.mesh().cores());
    throw Error(detail::located_message(SourceLoc(loc), &h,
                                        "predict: kernel '{}' runs on {} cores per device, and the model of {} "
                                        "steps devices of one core each",
                                        exe.program().name, exe.mesh().cores(), t.name));
  }
  detail::PlacedMesh placed = detail::place_mesh(exe.mesh(), t, layout);
  check_in_place_arguments(exe, args, "predict");
  // The Arrays' runtime lends its workers for the bytes of large copies.
  Runtime* rt = args.empty() ? nullptr : &args[0].runtime();
  static const RuntimeOptions defaults{};
  // The copies as the kernel wrote them: a TPU moves every one.
  detail::PredictModel model(exe.written_program(), t, std::move(placed), rt != nullptr ? &rt->pool() : nullptr,
                             rt != nullptr ? rt->options() : defaults, move_data);
  return model.run(args);
}
}  // namespace detail

REFX_DECL Prediction predict(const Executable& exe, const Target& t, const TorusLayout& layout,
                             const std::vector<Array>& args, refx::source_location loc) {
  return detail::run_prediction(exe, t, layout, args, loc, true);
}
REFX_DECL Prediction detail::predict_times(const Executable& exe, const Target& t, const TorusLayout& layout,
                                           const std::vector<Array>& args, refx::source_location loc) {
  return run_prediction(exe, t, layout, args, loc, false);
}

}  // namespace refx
