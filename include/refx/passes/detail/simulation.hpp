#pragma once
// The abstract execution behind verify(): runs the graph once, symbolically,
// tracking per semaphore how many bytes (DMA) or signals (REGULAR) it is owed
// and which copies are in flight with the regions they own. A copy that
// completes on a REGULAR semaphore owes it 1, and is known to have landed
// once that semaphore's count is back to 0.
//
// SPMD: every device runs the same program, so a remote copy started here
// stands for the peer's copy arriving here; counts are summed over devices
// (a semaphore that ends non-zero in that sum ends non-zero somewhere).
// What cannot be known is dropped, never guessed: after a `when` or a loop
// with a traced trip count, the semaphores its body touched become unknown;
// a loop with a static trip count runs twice (to see copies that cross an
// iteration) and its counts are extrapolated (each iteration adds the same
// constant). Traced indices are compared only within one iteration, and a
// peer's indices never.

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include <refx/ir/printer.hpp>
#include <refx/passes/footprint.hpp>
#include <refx/passes/options.hpp>

namespace refx::passes {

struct VerifyOptions {
  SharedSemaphorePolicy shared_semaphore = SharedSemaphorePolicy::allow;  // see pipeline.hpp
  /// Upper bound on ops simulated; past it loops run once and are extrapolated.
  std::size_t max_simulated_ops = std::size_t{1} << 24;
};

struct VerifyReport {
  std::vector<std::string> warnings;
};

}  // namespace refx::passes

namespace refx::detail {

class Simulator {
 public:
  Simulator(const Graph& g, passes::GraphFacts& facts, const passes::VerifyOptions& o)
      : g_(g), facts_(facts), options_(o) {
    peer_signalled_.assign(g.num_values(), 0);
    for (std::size_t o2 = 0; o2 < g.num_ops(); ++o2) {
      const Op& op = g.op(static_cast<OpId>(o2));
      if (facts.block_of(static_cast<OpId>(o2)) == no_id) continue;
      const auto views = g.views(op);
      if (op.prim == &prim::dma_start && prim::dma_start_attrs(g, op).remote)
        peer_signalled_[static_cast<std::size_t>(g.view(views[2]).ref)] = 1;
      if (op.prim == &prim::semaphore_signal && op.in_count > 1)
        peer_signalled_[static_cast<std::size_t>(g.view(views[0]).ref)] = 1;
      for (ViewId v : views)
        if (g.type(g.view(v).ref).is_semaphore()) sem_ops_[g.view(v).ref].push_back(static_cast<OpId>(o2));
    }
  }

  void run() {
    block(0);
    for (const auto& [sem, c] : sems_)  // allocate()d semaphores live until the kernel ends
      check_balance(sem, c, "the kernel ends");
  }
  passes::VerifyReport take_report() { return std::move(report_); }

 private:
  struct InFlight {
    std::int64_t desc = -1;
    OpId start = no_id;
    ValueId sem = no_id;
    std::int64_t elem = -1;  ///< semaphore element, or -1 when its index is traced
    std::int64_t owed = 0;   ///< what the semaphore rises by: bytes, or 1 for a REGULAR one
    prim::WaitSide side = prim::WaitSide::recv;
    ViewId src = no_id, dst = no_id;  ///< regions the copy owns until this side is waited
    bool dst_from_peer = false;       ///< dst is written by the peer's copy (peer's indices)
    bool crossed = false;             ///< started in an earlier loop iteration

    auto key() const { return std::tuple(desc, start, sem, elem, owed, side); }
  };
  struct Count {
    bool known = true;
    std::int64_t value = 0;
  };

  // ---- helpers
  SourceLoc desc_loc(std::int64_t d, SourceLoc fallback) const {
    const auto descs = g_.descriptors();
    return d >= 0 && static_cast<std::size_t>(d) < descs.size() ? descs[static_cast<std::size_t>(d)].loc : fallback;
  }
  std::int64_t bytes_of(ViewId v) const {
    return g_.view_elements(v) * static_cast<std::int64_t>(size_of(g_.type(g_.view(v).ref).dtype));
  }
  Count* count(ValueId sem) {
    auto it = sems_.find(sem);
    return it == sems_.end() ? nullptr : &it->second;
  }
  void forget(ValueId sem) {
    if (Count* c = count(sem)) c->known = false;
    std::erase_if(inflight_, [&](const InFlight& f) { return f.sem == sem; });
  }
  std::string op_lines(ValueId sem, const Primitive& p, std::size_t max = 4) const {
    std::vector<std::string> lines;
    auto it = sem_ops_.find(sem);
    if (it != sem_ops_.end())
      for (OpId o : it->second)
        if (g_.op(o).prim == &p && lines.size() < max) lines.push_back(fmt::format("{}", g_.op(o).loc));
    return lines.empty() ? std::string("none") : fmt::format("{}", fmt::join(lines, ", "));
  }

  // ---- blocks and control flow
  void block(BlockId b) {
    for (OpId o : g_.block(b).ops) {
      const Op& op = g_.op(o);
      switch (op.prim->control) {
        case ControlKind::none: leaf(o, op); break;
        case ControlKind::scope: scope(op); break;
        case ControlKind::loop: loop(o, op); break;
        case ControlKind::cond: cond(o, op); break;
      }
    }
  }

  void scope(const Op& op) {
    const BlockId body = g_.bodies(op)[0];
    std::vector<ValueId> mine;
    for (ValueId p : g_.block(body).params)
      if (g_.type(p).is_semaphore()) {
        sems_[p] = Count{};
        mine.push_back(p);
      }
    block(body);
    for (ValueId p : mine) {
      check_balance(p, sems_[p], fmt::format("its scope (at {}) ends", op.loc));
      sems_.erase(p);
      std::erase_if(inflight_, [&](const InFlight& f) { return f.sem == p; });
    }
  }

  void cond(OpId o, const Op& op) {
    const auto bodies = g_.bodies(op);
    if (bodies.size() > 1) {  // cond: each branch from the same state
      auto sems = sems_;
      auto inflight = inflight_;
      block(bodies[0]);
      std::swap(sems, sems_);
      std::swap(inflight, inflight_);
    }
    block(bodies.back());                                      // the path where a body runs
    for (ValueId s : facts_.summary(o).semaphores) forget(s);  // ... merged with the other one
  }

  void loop(OpId o, const Op& op) {
    const auto ins = g_.inputs(op);
    std::int64_t lo = 0, hi = 0;
    const BlockId body = g_.bodies(op)[0];
    if (!passes::constant_int(g_, ins[0], lo) || !passes::constant_int(g_, ins[1], hi)) {
      block(body);  // a path with one iteration; then the count is unknown
      for (ValueId s : facts_.summary(o).semaphores) forget(s);
      return;
    }
    const std::int64_t trips = hi - lo;
    if (trips <= 0) return;
    const auto before = sems_;
    block(body);
    if (trips == 1) return;
    // Each iteration adds the same constant to every known count.
    std::unordered_map<ValueId, std::int64_t> delta;
    for (const auto& [s, c] : sems_) {
      auto it = before.find(s);
      delta[s] = c.value - (it == before.end() ? 0 : it->second.value);
    }
    std::int64_t remaining = trips - 1;
    bool steady = false;
    if (simulated_ < options_.max_simulated_ops) {
      auto first = inflight_;
      for (InFlight& f : inflight_) f.crossed = true;
      block(body);
      --remaining;
      auto second = inflight_;
      const auto by_key = [](const InFlight& a, const InFlight& b) { return a.key() < b.key(); };
      std::sort(first.begin(), first.end(), by_key);
      std::sort(second.begin(), second.end(), by_key);
      steady = first.size() == second.size() &&
               std::equal(first.begin(), first.end(), second.begin(),
                          [](const InFlight& a, const InFlight& b) { return a.key() == b.key(); });
    }
    for (auto& [s, c] : sems_)
      if (auto it = delta.find(s); it != delta.end()) c.value += remaining * it->second;
    if (!steady)
      for (ValueId s : facts_.summary(o).semaphores)
        std::erase_if(inflight_, [&](const InFlight& f) { return f.sem == s; });
  }

  // ---- leaf ops
  void leaf(OpId o, const Op& op) {
    ++simulated_;
    if (op.prim != &prim::dma_wait && !inflight_.empty()) check_windows(op);
    if (op.prim == &prim::dma_start) start(o, op);
    else if (op.prim == &prim::dma_wait) wait_copy(o, op);
    else if (op.prim == &prim::semaphore_signal) signal(op);
    else if (op.prim == &prim::semaphore_wait) wait_semaphore(op);
    else if (op.prim == &prim::allocate)
      for (ValueId v : g_.outputs(op))
        if (g_.type(v).is_semaphore()) sems_.try_emplace(v);  // static storage: a re-run keeps the count
  }

  void check_windows(const Op& op) {
    const bool start = op.prim == &prim::dma_start;
    const std::int64_t own = start ? prim::dma_start_attrs(g_, op).descriptor : -2;
    // A remote start writes its destination on the peer, not here.
    const ViewId remote_dst = start && prim::dma_start_attrs(g_, op).remote ? g_.views(op)[1] : no_id;
    for (const Effect& e : g_.effects(op)) {
      if (!(e.bits & passes::data_bits) || e.view == no_id || e.view == remote_dst) continue;
      for (const InFlight& f : inflight_) {
        if (f.desc == own) continue;
        const SourceLoc made = desc_loc(f.desc, g_.op(f.start).loc);
        if ((e.bits & (effect_write | effect_accum)) && f.src != no_id && must_overlap(g_, e.view, f.src, !f.crossed))
          verify_error(
              "{} at {} writes the source of the copy started at {} (descriptor made at {}) before the "
              "copy is waited: the copy may still be reading it; {} first",
              op.prim->name, op.loc, g_.op(f.start).loc, made,
              how_to_wait(f, f.side == prim::WaitSide::send ? "wait_send" : "wait"));
        if (f.dst != no_id && must_overlap(g_, e.view, f.dst, !f.crossed && !f.dst_from_peer))
          verify_error(
              "{} at {} {} the destination of the copy started at {} (descriptor made at {}) before the "
              "copy is waited: {} may still be writing it; {} first",
              op.prim->name, op.loc, (e.bits & effect_read) ? "reads" : "writes", g_.op(f.start).loc, made,
              f.dst_from_peer ? "the peer's copy (every device runs this start)" : "the copy",
              how_to_wait(f, f.dst_from_peer ? "wait_recv" : "wait"));
      }
    }
  }

  void start(OpId o, const Op& op) {
    const auto v = g_.views(op);
    const auto a = g_.attrs(op);
    const bool remote = a[2] != 0;
    const std::int64_t bytes = bytes_of(v[0]);
    const auto owed = [&](ViewId sem) { return regular(g_.view(sem).ref) ? 1 : bytes; };
    InFlight recv{a[0], o, g_.view(v[2]).ref, static_offset(g_, v[2]), owed(v[2]), prim::WaitSide::recv};
    recv.dst = v[1];
    recv.dst_from_peer = remote;
    if (!remote) recv.src = v[0];
    add_inflight(recv, op);
    if (remote && v.size() > 3) {
      InFlight send{a[0], o, g_.view(v[3]).ref, static_offset(g_, v[3]), owed(v[3]), prim::WaitSide::send};
      send.src = v[0];
      add_inflight(send, op);
    }
  }

  void add_inflight(const InFlight& f, const Op& op) {
    // A REGULAR semaphore counts copies: sharing one among copies in flight is what it is for.
    if (options_.shared_semaphore != passes::SharedSemaphorePolicy::allow && f.elem >= 0 && !regular(f.sem))
      for (const InFlight& other : inflight_)
        if (other.sem == f.sem && other.elem == f.elem) {
          std::string msg = verify_message(
              "{}{} is shared by two copies in flight at once: the copy started at {} (made at {}) and "
              "the copy started at {} (made at {}); a wait cannot tell which one landed, so give each copy in "
              "flight its own semaphore",
              semaphore_name(g_, f.sem), g_.type(f.sem).shape.rank() ? fmt::format("[{}]", f.elem) : "",
              g_.op(other.start).loc, desc_loc(other.desc, g_.op(other.start).loc), op.loc, desc_loc(f.desc, op.loc));
          if (options_.shared_semaphore == passes::SharedSemaphorePolicy::error) throw VerifyError(msg);
          report_.warnings.push_back(std::move(msg));
          break;
        }
    inflight_.push_back(f);
    if (Count* c = count(f.sem); c && c->known) c->value += f.owed;
  }

  void wait_copy(OpId o, const Op& op) {
    const auto v = g_.views(op);
    const auto a = g_.attrs(op);
    const auto side = static_cast<prim::WaitSide>(a[1]);
    const ValueId sem = g_.view(v[2]).ref;
    const std::int64_t elem = static_offset(g_, v[2]);
    const std::int64_t bytes = bytes_of(v[side == prim::WaitSide::recv ? 1 : 0]);
    // Which copy completes: this descriptor's, else the oldest on that semaphore element.
    auto match = std::find_if(inflight_.begin(), inflight_.end(),
                              [&](const InFlight& f) { return f.desc == a[0] && f.side == side && f.sem == sem; });
    if (match == inflight_.end())
      match = std::find_if(inflight_.begin(), inflight_.end(), [&](const InFlight& f) {
        return f.sem == sem && (f.elem < 0 || elem < 0 || f.elem == elem);
      });
    if (match != inflight_.end()) inflight_.erase(match);
    Count* c = count(sem);
    if (c && c->known) {
      if (c->value < bytes && !peer_signalled_[static_cast<std::size_t>(sem)]) {
        const auto key = std::pair(a[0], a[1]);
        auto prev = last_wait_.find(key);
        if (prev != last_wait_.end())
          verify_error(
              "the copy made at {} is waited twice: at {} and again at {}; the "
              "second wait can never be satisfied",
              desc_loc(a[0], op.loc), g_.op(prev->second).loc, op.loc);
        verify_error(
            "the wait at {} (descriptor made at {}) waits for {} bytes on {}, but "
            "only {} bytes of copies are in flight on it (copies started at {}); it would "
            "wait forever",
            op.loc, desc_loc(a[0], op.loc), bytes, semaphore_name(g_, sem), c->value, op_lines(sem, prim::dma_start));
      }
      c->value -= bytes;
    }
    last_wait_[std::pair(a[0], a[1])] = o;
  }

  void signal(const Op& op) {
    const ValueId sem = g_.view(g_.views(op)[0]).ref;
    Count* c = count(sem);
    if (c == nullptr || !c->known) return;
    std::int64_t inc = 0;
    if (!passes::constant_int(g_, g_.inputs(op)[0], inc)) c->known = false;
    else c->value += inc;
  }

  void wait_semaphore(const Op& op) {
    const ValueId sem = g_.view(g_.views(op)[0]).ref;
    Count* c = count(sem);
    std::int64_t value = 0;
    if (c == nullptr || !c->known || !passes::constant_int(g_, g_.inputs(op)[0], value)) {
      forget(sem);  // which copies completing on it have landed is not known
      return;
    }
    if (c->value < value && !peer_signalled_[static_cast<std::size_t>(sem)])
      verify_error(
          "semaphore_wait at {} waits for {} on {}, which only this device "
          "signals and which holds {} at that point (signals at {}); it would wait forever",
          op.loc, value, semaphore_name(g_, sem), c->value, op_lines(sem, prim::semaphore_signal));
    c->value -= value;
    // Back to 0: every copy completing on it has landed (before, which ones did is not known).
    if (c->value == 0) std::erase_if(inflight_, [&](const InFlight& f) { return f.sem == sem; });
  }
  bool regular(ValueId sem) const { return g_.type(sem).semaphore == SemaphoreKind::regular; }
  /// How to wait for copy `f` in a message: "call wait() on the copy", ...
  std::string how_to_wait(const InFlight& f, const char* call) const {
    if (regular(f.sem)) return fmt::format("wait for it with semaphore_wait on {}", semaphore_name(g_, f.sem));
    return fmt::format("call {}() on the copy", call);
  }

  // ---- balance at the end of a semaphore's life
  void check_balance(ValueId sem, const Count& c, const std::string& when) {
    if (!c.known || c.value == 0) return;
    const ValueType& t = g_.type(sem);
    if (t.semaphore == SemaphoreKind::dma) {
      if (c.value > 0) {
        for (const InFlight& f : inflight_)
          if (f.sem == sem)
            verify_error(
                "the copy started at {} (descriptor made at {}) is never waited ({} side) before {}: "
                "{} ends with {} bytes; wait on it ({})",
                g_.op(f.start).loc, desc_loc(f.desc, g_.op(f.start).loc),
                f.side == prim::WaitSide::recv ? "receive" : "send", when, semaphore_name(g_, sem), c.value,
                f.side == prim::WaitSide::recv ? "wait / wait_recv" : "wait_send");
        verify_error(
            "{} ends with {} bytes of copies never waited when {} (copies "
            "started at {}; waits at {})",
            semaphore_name(g_, sem), c.value, when, op_lines(sem, prim::dma_start), op_lines(sem, prim::dma_wait));
      }
      verify_error(
          "{} is waited for {} more bytes than its copies bring when {} (waits "
          "at {}; copies started at {}): a wait would block forever",
          semaphore_name(g_, sem), -c.value, when, op_lines(sem, prim::dma_wait), op_lines(sem, prim::dma_start));
    }
    if (const std::string copies = op_lines(sem, prim::dma_start); copies != "none")
      verify_error(
          "the copies, signals and waits on {} do not balance when {}: it ends at {} (copies completing on it "
          "started at {}; signals at {}; waits at {}); each copy raises it by 1, and every copy and signal must be "
          "waited",
          semaphore_name(g_, sem), when, c.value, copies, op_lines(sem, prim::semaphore_signal),
          op_lines(sem, prim::semaphore_wait));
    verify_error(
        "the signals and waits on {} do not balance when {}: {} {} than waited "
        "(signals at {}; waits at {}); every signal must be waited",
        semaphore_name(g_, sem), when, c.value > 0 ? c.value : -c.value,
        c.value > 0 ? "more signalled" : "less signalled", op_lines(sem, prim::semaphore_signal),
        op_lines(sem, prim::semaphore_wait));
  }

  struct PairHash {
    std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& p) const noexcept {
      return std::hash<std::int64_t>{}(p.first * 2 + p.second);
    }
  };

  const Graph& g_;
  passes::GraphFacts& facts_;
  passes::VerifyOptions options_;
  passes::VerifyReport report_;
  std::vector<char> peer_signalled_;
  std::unordered_map<ValueId, std::vector<OpId>> sem_ops_;
  std::unordered_map<ValueId, Count> sems_;
  std::vector<InFlight> inflight_;
  std::unordered_map<std::pair<std::int64_t, std::int64_t>, OpId, PairHash> last_wait_;
  std::size_t simulated_ = 0;
};

}  // namespace refx::detail
