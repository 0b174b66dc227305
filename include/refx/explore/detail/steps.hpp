#pragma once
// The controlled scheduler's vocabulary (controlled.hpp): what one step read
// and wrote (for exhaustive search), a scheduling point, what a step did (and
// its words), and one run's outcome; and in_pieces, which spreads a restore, a comparison or
// a large landing over the runtime's idle workers.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <refx/explore/report.hpp>
#include <refx/ir/eval.hpp>
#include <refx/runtime/detail/semaphore_names.hpp>
#include <refx/runtime/program.hpp>
#include <refx/runtime/worker_pool.hpp>

namespace refx::detail {

/// A buffer and the interval of element offsets a view of it spans.
struct ElementSpan {
  const Buffer* buffer = nullptr;
  std::int64_t lo = 0, hi = -1;
  bool overlaps(const ElementSpan& o) const noexcept { return buffer == o.buffer && lo <= o.hi && o.lo <= hi; }
};

/// The elements a view spans.
inline ElementSpan element_span(const ResolvedView& v) {
  if (v.elements() == 0) return ElementSpan{v.buffer, 0, -1};
  ElementSpan s{v.buffer, v.offset, v.offset};
  for (std::size_t d = 0; d < v.shape.rank(); ++d) s.hi += (v.shape[d] - 1) * v.strides[d];
  return s;
}

/// What one step read and wrote (recorded for exhaustive search): element
/// ranges of buffers, and counters it read or waited on or added to. Two
/// steps conflict when one writes what the other reads or writes, or adds
/// to a counter the other reads (additions commute). A lane's presence in
/// the kernel is a counter: entering and leaving add to it, every arrival
/// but a barrier semaphore's reads it.
struct Footprint {
  std::vector<ElementSpan> reads, writes;
  std::vector<const void*> read_counters, added_counters;

  void read(const ElementSpan& s) { merge(reads, s); }
  void write(const ElementSpan& s) { merge(writes, s); }
  bool conflicts(const Footprint& o) const noexcept {
    return any(writes, o.writes) || any(writes, o.reads) || any(reads, o.writes) ||
           shares(added_counters, o.read_counters) || shares(read_counters, o.added_counters);
  }

 private:
  static void merge(std::vector<ElementSpan>& v, const ElementSpan& s) {
    for (ElementSpan& e : v)
      if (e.buffer == s.buffer && s.lo <= e.hi + 1 && e.lo <= s.hi + 1) {
        e.lo = std::min(e.lo, s.lo);
        e.hi = std::max(e.hi, s.hi);
        return;
      }
    v.push_back(s);
  }
  static bool any(const std::vector<ElementSpan>& a, const std::vector<ElementSpan>& b) noexcept {
    for (const ElementSpan& x : a)
      for (const ElementSpan& y : b)
        if (x.overlaps(y)) return true;
    return false;
  }
  static bool shares(const std::vector<const void*>& a, const std::vector<const void*>& b) noexcept {
    return std::find_first_of(a.begin(), a.end(), b.begin(), b.end()) != a.end();
  }
};

/// One scheduling point. Its identity (kind, lane, source, seq) is the same
/// in every run that reaches it: a run point is its lane's next step; a
/// copy or signal is its source's seq-th.
struct Action {
  enum class Kind : std::uint8_t { run, land, signal };
  Kind kind = Kind::run;
  std::int32_t lane = 0;    ///< run: the lane; land / signal: the lane it arrives in
  std::int32_t source = 0;  ///< land / signal: the lane that started it
  std::int64_t seq = -1;    ///< land / signal: the source's copies and signals before it
  static Action running(std::int32_t l) {
    Action a;
    a.lane = l;
    return a;
  }
  static Action arrival(Kind k, std::int32_t target, std::int32_t from, std::int64_t seq) {
    Action a;
    a.kind = k;
    a.lane = target;
    a.source = from;
    a.seq = seq;
    return a;
  }

  bool same(const Action& o) const noexcept {
    return kind == o.kind && lane == o.lane && source == o.source && seq == o.seq;
  }
  /// Whether `o` is a point of the same thread: a lane's runs are one
  /// thread; each copy and signal is a thread of its own.
  bool same_thread(const Action& o) const noexcept {
    return kind == Kind::run ? o.kind == Kind::run && lane == o.lane : same(o);
  }
};

/// What one step did, for the schedule in words and the timeline.
struct StepRecord {
  Action action;
  const Op* from = nullptr;  ///< run: where the lane was; land / signal: the op that started it
  const Op* to = nullptr;    ///< run: where it stopped (null: at its end)
  bool entered = false;      ///< run: its first (of a call)
  std::int32_t call = 0;     ///< run: the lane's call; land / signal: the one it was started in
  bool waits = false;        ///< run: it stopped at a wait whose count is not there
  std::int64_t bytes = 0;    ///< land: the copy's
  ValueId sem = no_id;       ///< signal: the semaphore
};

struct RunFailure {
  ScheduleFailure::Kind kind = ScheduleFailure::Kind::error;
  std::string message;
};

/// One run's outcome.
struct RunOutcome {
  std::optional<RunFailure> failure;
  std::vector<std::uint32_t> choices;  ///< per step, the index chosen among the enabled points
  std::vector<StepRecord> steps;       ///< when recorded
  bool stopped = false;                ///< the strategy stopped it (a redundant order)
  /// Per step, the point taken and, for a copy or signal, the step that
  /// issued it (-1 for a run).
  std::vector<Action> taken;
  std::vector<std::int64_t> issued_by;
  /// Per step, what it read and wrote (when asked for).
  std::vector<Footprint> footprints;
  /// Per lane, its runs and, as a set, what arrived between two of them
  /// (the copies and signals landing in it, or reading from it), hashed:
  /// runs whose lanes each saw the same sequence hash alike.
  std::uint64_t order_hash = 0;
  /// Accumulating copies as they landed: (destination buffer, source lane).
  std::vector<std::pair<const Buffer*, std::int32_t>> accumulations;
};

/// Words for step `r` of a run of `p`, making `calls` calls; `together`:
/// every device enters each call at once.
inline std::string describe_step(const Program& p, const StepRecord& r, std::int32_t calls, bool together) {
  const Mesh& m = p.mesh;
  const auto at = [](const Op* op) { return op ? fmt::format("{} at {}", op->prim->name, op->loc) : "its end"; };
  const std::string kernel = calls == 1 ? std::string("the kernel")
                             : r.call == 0 || !together
                                 ? fmt::format("call {} of the kernel", r.call + 1)
                                 : fmt::format("call {} of the kernel with every device", r.call + 1);
  const std::string in_call = calls > 1 ? fmt::format(" in call {}", r.call + 1) : "";
  switch (r.action.kind) {
    case Action::Kind::run:
      if (r.from == nullptr && r.to == nullptr && !r.entered)
        return fmt::format("{} leaves {}", m.describe_lane(r.action.lane), kernel);
      return fmt::format("{} {} {} to {}", m.describe_lane(r.action.lane), r.entered ? "enters" : "runs from",
                         r.entered ? kernel + " and runs" : at(r.from) + in_call,
                         r.to == nullptr ? std::string("the end")
                         : r.waits       ? at(r.to) + " (waits)"
                                         : at(r.to));
    case Action::Kind::land:
      return fmt::format("the copy {} started at {}{} ({} bytes) lands in {}", m.describe_lane(r.action.source),
                         r.from ? r.from->loc : SourceLoc{}, in_call, r.bytes, m.describe_lane(r.action.lane));
    case Action::Kind::signal:
      return fmt::format("the signal {} sent at {}{} reaches {} of {}", m.describe_lane(r.action.source),
                         r.from ? r.from->loc : SourceLoc{}, in_call, report_semaphore_name(p.graph, r.sem),
                         m.describe_lane(r.action.lane));
  }
  return {};
}

inline constexpr std::size_t stop_run = static_cast<std::size_t>(-1);

/// Runs f(begin, end) over [0, n) in pieces of `per`, on this thread and
/// the pool's idle workers, and returns when all have run: the outputs'
/// restore and comparison, whose bytes the threaded runtime's call would
/// spread over its workers too.
template <class F>
void in_pieces(WorkerPool* pool, std::int64_t n, std::int64_t per, const F& f) {
  const std::int64_t pieces = (n + per - 1) / per;
  if (pool == nullptr || pool->size() < 2 || pieces < 2) return f(std::int64_t{0}, n);
  struct Shared {
    std::atomic<std::int64_t> next{0}, left{0};
  };
  auto shared = std::make_shared<Shared>();
  shared->left.store(pieces);
  const auto work = [shared, n, per, pieces, &f] {
    for (std::int64_t p; (p = shared->next.fetch_add(1, std::memory_order_relaxed)) < pieces;) {
      f(p * per, std::min(n, (p + 1) * per));
      shared->left.fetch_sub(1, std::memory_order_acq_rel);
    }
  };
  // Each helper only touches `f` (on this frame) while pieces are left, and
  // this thread returns only once none is.
  for (std::int64_t h = 1; h < std::min<std::int64_t>(pieces, static_cast<std::int64_t>(pool->size())); ++h)
    pool->push([shared, work] { work(); });
  work();
  while (shared->left.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

}  // namespace refx::detail
