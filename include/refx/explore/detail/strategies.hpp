#pragma once
// The strategies of refx::explore (docs/runtime.md, "Controlled
// schedules"): each picks, at every scheduling point, one of the enabled
// points (controlled.hpp's Action). Deterministic: a run's choices depend
// only on the seed, the run's number and what the kernel does.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <refx/core/error.hpp>
#include <refx/explore/detail/controlled.hpp>

namespace refx::detail {

/// SplitMix64: a run's random numbers, the same on every platform.
class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) (n > 0; the bias of a 64-bit modulus is negligible).
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t s_;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  /// Before run `run` (1, 2, ...: run 0 is the default schedule); false:
  /// nothing is left to run.
  virtual bool begin(std::int64_t run) = 0;
  /// The index of the point to take among `enabled` at `step`, or stop_run.
  virtual std::size_t choose(std::span<const Action> enabled, std::size_t step, const RunOutcome& so_far) = 0;
  /// The run has ended (the strategy may learn from it).
  virtual void end(const RunOutcome& /*outcome*/) {}
  /// Whether it needs each step's Footprint.
  virtual bool footprints() const { return false; }
  /// Every distinguishable order has been run (exhaustive only).
  virtual bool finished() const { return false; }
};

class RandomWalk final : public Strategy {
 public:
  explicit RandomWalk(std::uint64_t seed) : seed_(seed) {}
  bool begin(std::int64_t run) override {
    rng_ = SplitMix(seed_ ^ (static_cast<std::uint64_t>(run) * 0xd1b54a32d192ed03ull));
    return true;
  }
  std::size_t choose(std::span<const Action> enabled, std::size_t, const RunOutcome&) override {
    return static_cast<std::size_t>(rng_.below(enabled.size()));
  }

 private:
  std::uint64_t seed_;
  SplitMix rng_{0};
};

/// PCT: every thread (a lane, a copy, a signal) gets a random priority when
/// first enabled, above depth; the highest enabled runs. At depth - 1
/// points drawn from the steps of the longest run so far, the thread about
/// to run drops below every initial priority (to depth - 1, ..., 1).
class Pct final : public Strategy {
 public:
  Pct(std::uint64_t seed, std::int32_t depth) : seed_(seed), depth_(depth) {}
  bool begin(std::int64_t run) override {
    rng_ = SplitMix(seed_ ^ (static_cast<std::uint64_t>(run) * 0xd1b54a32d192ed03ull));
    priority_.clear();
    changes_.clear();
    for (std::int32_t i = 1; i < depth_; ++i) changes_.push_back(rng_.below(std::max<std::uint64_t>(steps_, 1)));
    return true;
  }
  std::size_t choose(std::span<const Action> enabled, std::size_t step, const RunOutcome&) override {
    std::size_t best = pick(enabled);
    for (std::size_t c = 0; c < changes_.size(); ++c)
      if (changes_[c] == step) {
        priority_[thread(enabled[best])] = static_cast<std::uint64_t>(depth_ - 1 - static_cast<std::int32_t>(c));
        best = pick(enabled);
      }
    return best;
  }
  void end(const RunOutcome& o) override { steps_ = std::max<std::uint64_t>(steps_, o.choices.size()); }
  /// The longest run's steps so far (the first is the default schedule's).
  void seen_steps(std::uint64_t n) { steps_ = std::max(steps_, n); }

 private:
  static std::uint64_t thread(const Action& a) {
    if (a.kind == Action::Kind::run) return static_cast<std::uint64_t>(a.lane);
    return (static_cast<std::uint64_t>(a.source + 1) << 32) | static_cast<std::uint64_t>(a.seq);
  }
  std::size_t pick(std::span<const Action> enabled) {
    std::size_t best = 0;
    std::uint64_t top = 0;
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      auto [it, fresh] = priority_.try_emplace(thread(enabled[i]), 0);
      if (fresh) it->second = static_cast<std::uint64_t>(depth_) + 1 + (rng_.next() >> 8);
      if (i == 0 || it->second > top) best = i, top = it->second;
    }
    return best;
  }

  std::uint64_t seed_;
  std::int32_t depth_;
  SplitMix rng_{0};
  std::uint64_t steps_ = 0;
  std::vector<std::uint64_t> changes_;
  std::unordered_map<std::uint64_t, std::uint64_t> priority_;
};

/// Depth-first search over every order that the kernel can tell apart:
/// source-set dynamic partial-order reduction (Abdulla et al., POPL 2014)
/// with sleep sets, over what each step actually read and wrote
/// (Footprint). At least one run of every class of equivalent orders (two
/// runs are equivalent when they order every two conflicting steps alike);
/// runs that would repeat a class stop where every point sleeps. A point
/// explored at a state sleeps in its siblings' subtrees until a step that
/// conflicts with it runs. Stateless: each run replays the prefix from the
/// start (the program is deterministic).
class Exhaustive final : public Strategy {
 public:
  bool begin(std::int64_t) override { return !done_; }
  bool footprints() const override { return true; }
  std::size_t choose(std::span<const Action> enabled, std::size_t step, const RunOutcome& so_far) override {
    if (step < frames_.size()) {  // the prefix being replayed
      const Frame& f = frames_[step];
      if (f.enabled.size() != enabled.size() || !std::equal(enabled.begin(), enabled.end(), f.enabled.begin(),
                                                            [](const Action& a, const Action& b) { return a.same(b); }))
        throw RuntimeError(
            fmt::format("refx: explore: the kernel took another path at step {} of a replayed "
                        "prefix: it is not deterministic (a host callback's state, or an input it "
                        "writes?), so exhaustive search cannot cover its orders",
                        step));
      return f.chosen;
    }
    Frame f;
    f.enabled.assign(enabled.begin(), enabled.end());
    f.backtrack.assign(enabled.size(), false);
    f.done.assign(enabled.size(), std::nullopt);
    if (step > 0) {
      const Frame& parent = frames_[step - 1];
      const Action& taken = parent.enabled[parent.chosen];
      const Footprint& fp = so_far.footprints[step - 1];
      const auto keep = [&](const Action& a, const Footprint& b) {
        if (!a.same_thread(taken) && !b.conflicts(fp)) f.sleep.push_back({a, b});
      };
      for (const auto& [a, b] : parent.sleep) keep(a, b);
      for (std::size_t i = 0; i < parent.enabled.size(); ++i)
        if (parent.done[i]) keep(parent.enabled[i], *parent.done[i]);
    }
    std::size_t first = stop_run;
    for (std::size_t i = 0; i < f.enabled.size() && first == stop_run; ++i)
      if (!asleep(f, i)) first = i;
    if (first == stop_run) return stop_run;  // every point here was explored in an equivalent order
    f.backtrack[first] = true;
    f.chosen = first;
    frames_.push_back(std::move(f));
    return first;
  }
  void end(const RunOutcome& o) override {
    add_races(o);
    while (!frames_.empty()) {
      Frame& top = frames_.back();
      top.done[top.chosen] = o.footprints[frames_.size() - 1];
      for (std::size_t i = 0; i < top.enabled.size(); ++i)
        if (top.backtrack[i] && !top.done[i] && !asleep(top, i)) {
          top.chosen = i;
          return;
        }
      frames_.pop_back();
    }
    done_ = true;
  }
  bool finished() const override { return done_; }

 private:
  struct Frame {
    std::vector<Action> enabled;
    std::vector<std::pair<Action, Footprint>> sleep;
    std::vector<bool> backtrack;
    std::vector<std::optional<Footprint>> done;  // per enabled point: what it did when explored
    std::size_t chosen = 0;
  };
  static bool asleep(const Frame& f, std::size_t i) {
    return std::any_of(f.sleep.begin(), f.sleep.end(), [&](const auto& b) { return b.first.same(f.enabled[i]); });
  }
  static std::size_t find(const Frame& f, const Action& thread) {
    for (std::size_t i = 0; i < f.enabled.size(); ++i)
      if (f.enabled[i].same_thread(thread)) return i;
    return stop_run;
  }

  // Source-DPOR's backtracking (Abdulla, Aronis, Jonsson and Sagonas,
  // POPL 2014), over the finished run: for each race i < j -- conflicting
  // steps of different threads, i before j with nothing in between that
  // follows i and precedes j -- let v be the steps after i that do not
  // follow it, then j: unless a thread that can start v is already to be
  // explored at frame i, one is added there.
  void add_races(const RunOutcome& o) {
    const std::size_t n = std::min(frames_.size(), o.footprints.size());
    const std::size_t words = (n + 63) / 64;
    std::vector<std::uint64_t> hb(n * words, 0);  // row j: the steps j follows (not j itself)
    const auto row = [&](std::size_t j) { return hb.data() + j * words; };
    const auto before = [&](std::size_t i, std::size_t j) { return ((row(j)[i / 64] >> (i % 64)) & 1u) != 0; };
    std::vector<std::size_t> direct;  // the steps j follows directly
    std::vector<std::size_t> v;
    for (std::size_t j = 0; j < n; ++j) {
      const Action& aj = step(j);
      const auto issuer = static_cast<std::size_t>(o.issued_by[j]);  // max for a run
      direct.clear();
      std::uint64_t* r = row(j);
      for (std::size_t i = j; i-- > 0;) {
        const bool thread = step(i).same_thread(aj), conflict = o.footprints[i].conflicts(o.footprints[j]);
        if (!(thread || i == issuer || conflict) || before(i, j)) continue;  // not an edge, or implied
        for (std::size_t w = 0; w < words; ++w) r[w] |= row(i)[w];
        r[i / 64] |= std::uint64_t{1} << (i % 64);
        if (!thread && i != issuer) direct.push_back(i);  // a race: i could go after j
      }
      for (std::size_t i : direct) {
        v.clear();
        for (std::size_t k = i + 1; k < j; ++k)
          if (!before(i, k)) v.push_back(k);
        v.push_back(j);
        Frame& at = frames_[i];
        std::size_t add = stop_run;
        bool covered = false;
        for (std::size_t x = 0; x < v.size() && !covered; ++x) {
          const std::size_t k = v[x];
          bool initial = true;  // no step of v before it that it follows
          for (std::size_t y = 0; y < x && initial; ++y) initial = !before(v[y], k);
          if (!initial) continue;
          const std::size_t c = find(at, step(k));
          if (c == stop_run) continue;
          if (at.backtrack[c]) covered = true;
          else if (add == stop_run) add = c;
        }
        if (!covered && add != stop_run) at.backtrack[add] = true;
      }
    }
  }
  const Action& step(std::size_t k) const { return frames_[k].enabled[frames_[k].chosen]; }

  std::vector<Frame> frames_;
  bool done_ = false;
};

/// A hash of the run's equivalence class (it needs footprints): the
/// ordered pairs of its conflicting steps, each named by its thread and
/// its place in the thread. Runs that order every conflicting pair alike
/// hash alike; exhaustive search runs one of each.
inline std::uint64_t order_class(const RunOutcome& o) {
  const std::size_t n = o.footprints.size();
  std::vector<std::uint64_t> name(n);
  std::unordered_map<std::uint64_t, std::uint64_t> seen;
  for (std::size_t j = 0; j < n; ++j) {
    const Action& a = o.taken[j];
    const std::uint64_t thread = a.kind == Action::Kind::run ? static_cast<std::uint64_t>(a.lane)
                                                             : (static_cast<std::uint64_t>(a.source + 1) << 32) |
                                                                   static_cast<std::uint64_t>(a.seq);
    name[j] = SplitMix(thread * 0x9e3779b97f4a7c15ull + seen[thread]++).next();
  }
  std::uint64_t h = 0;
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < j; ++i)
      if (o.taken[i].same_thread(o.taken[j]) || o.issued_by[j] == static_cast<std::int64_t>(i) ||
          o.footprints[i].conflicts(o.footprints[j]))
        h += SplitMix(name[i] ^ (name[j] * 0xd1b54a32d192ed03ull)).next();
  return h;
}

/// Replays recorded choices; past their end (or where `defaults` says), the
/// default point, index 0.
class Replay final {
 public:
  explicit Replay(std::vector<std::uint32_t> choices = {}) : choices_(std::move(choices)) {}
  /// The first step whose recorded choice does not fit the enabled points
  /// (a token made for something else), or -1.
  std::int64_t misfit = -1;
  std::size_t misfit_index = 0, misfit_enabled = 0;
  bool strict = true;  // a misfit stops the run (replay) or falls back to 0 (minimisation)

  std::size_t operator()(std::span<const Action> enabled, std::size_t step, const RunOutcome&) {
    if (step >= choices_.size()) return 0;
    if (choices_[step] < enabled.size()) return choices_[step];
    if (misfit < 0) {
      misfit = static_cast<std::int64_t>(step);
      misfit_index = choices_[step];
      misfit_enabled = enabled.size();
    }
    return strict ? stop_run : 0;
  }

 private:
  std::vector<std::uint32_t> choices_;
};

}  // namespace refx::detail
