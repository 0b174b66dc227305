#pragma once
// The definitions of explore.hpp (inline: a program that explores includes
// it). An Explorer holds one call's controlled scheduler (controlled.hpp),
// the default schedule's outputs to compare every run's against, and the
// tokens (token.hpp); explore() drives a strategy (strategies.hpp) through
// it, replay() one token.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/core/error.hpp>
#include <refx/explore/detail/controlled.hpp>
#include <refx/explore/detail/strategies.hpp>
#include <refx/explore/detail/token.hpp>
#include <refx/runtime/detail/timeline_json.hpp>

namespace refx {

inline std::string_view to_string(ScheduleFailure::Kind k) {
  switch (k) {
    case ScheduleFailure::Kind::error: return "error";
    case ScheduleFailure::Kind::deadlock: return "deadlock";
    case ScheduleFailure::Kind::race: return "data race";
    case ScheduleFailure::Kind::unbalanced: return "semaphores not back to 0";
    case ScheduleFailure::Kind::not_entered: return "lands before entry";
    case ScheduleFailure::Kind::left: return "lands after exit";
    case ScheduleFailure::Kind::output: return "outputs differ";
    case ScheduleFailure::Kind::carried: return "carried into another call";
  }
  return "?";
}

inline std::string_view to_string(ExploreStrategy s) {
  switch (s) {
    case ExploreStrategy::random: return "random";
    case ExploreStrategy::pct: return "pct";
    case ExploreStrategy::exhaustive: return "exhaustive";
  }
  return "?";
}

namespace detail {

/// One call of a kernel under the controlled scheduler, and what every run
/// is judged against.
class Explorer {
 public:
  Explorer(const Executable& exe, const std::vector<Array>& args, bool apart, bool races, std::int32_t calls)
      : program_(exe.written_program()), run_(program_, args, inputs_of(exe), apart, races, calls) {
    token_.kernel = token_name(exe.program().name);
    token_.fingerprint = program_fingerprint(*program_);
    token_.lanes = exe.mesh().lanes();
    token_.apart = apart;
    token_.races = races;
    token_.calls = calls;
  }

  /// Runs `choose`'s schedule and judges it: its own failure, or outputs
  /// that differ from the reference (once there is one).
  template <class Choose>
  RunOutcome judged(Choose&& choose, bool record = false, bool footprints = false) {
    RunOutcome o = run_.run(choose, record, footprints);
    if (!o.failure && !o.stopped && has_reference_) o.failure = compare(o);
    return o;
  }
  /// The default schedule's outputs become the reference.
  void keep_reference(const RunOutcome& o) {
    run_.save_outputs(reference_);
    reference_accumulations_ = o.accumulations;
    has_reference_ = true;
  }
  /// The Arrays get the reference's results back.
  void restore_reference() {
    if (has_reference_) run_.restore_outputs(reference_);
  }

  std::string token(const std::vector<std::uint32_t>& choices) const {
    ScheduleToken t = token_;
    t.choices = choices;
    return encode(t);
  }
  /// `text` decoded and checked against this kernel; throws naming `where`.
  ScheduleToken check(std::string_view text, std::string_view where) const {
    ScheduleToken t = decode(text, where);
    const Program& p = *program_;
    if (t.kernel != token_.kernel)
      throw Error(fmt::format("refx: {}: the replay token is for kernel '{}', not '{}'", where, t.kernel, p.name));
    if (t.lanes != token_.lanes)
      throw Error(fmt::format("refx: {}: the replay token is for a mesh of {} lanes; kernel '{}' runs on {} ({})",
                              where, t.lanes, p.name, token_.lanes, p.mesh.describe()));
    if (t.fingerprint != token_.fingerprint)
      throw Error(
          fmt::format("refx: {}: kernel '{}' is not the one the replay token was made for (its program or "
                      "mesh has changed: fingerprint {:016x}, the token's {:016x}); explore it again for a "
                      "new token",
                      where, p.name, token_.fingerprint, t.fingerprint));
    return t;
  }

  /// A failing run, with its token, minimised if asked.
  ScheduleFailure failure(const RunOutcome& o, std::int64_t run, bool minimise, std::int64_t& extra_runs) {
    ScheduleFailure f;
    f.kind = o.failure->kind;
    f.message = o.failure->message;
    f.token = token(o.choices);
    f.steps = static_cast<std::int64_t>(o.choices.size());
    f.run = run;
    std::vector<std::uint32_t> best = o.choices;
    if (minimise) best = minimised(best, f.kind, extra_runs);
    f.minimal_token = token(best);
    f.minimal_choices = std::count_if(best.begin(), best.end(), [](std::uint32_t c) { return c != 0; });
    Replay r(best);
    const RunOutcome m = judged(r, true);
    if (m.failure) f.message = m.failure->message;  // what the schedule below shows
    f.minimal_steps = static_cast<std::int64_t>(m.choices.size());
    f.schedule = words(m);
    last_ = m;
    return f;
  }
  /// The recorded run of the last failure() or replayed().
  const RunOutcome& last() const noexcept { return last_; }

  ReplayResult replayed(const ScheduleToken& t, std::string_view where) {
    Replay r(t.choices);
    RunOutcome o = judged(r, true);
    if (r.misfit >= 0)
      throw Error(
          fmt::format("refx: {}: the replay token chooses point {} of the {} enabled at step {}: it was made "
                      "with other arguments, or for another version of the kernel",
                      where, r.misfit_index, r.misfit_enabled, r.misfit));
    ReplayResult res;
    res.steps = static_cast<std::int64_t>(o.choices.size());
    res.schedule = words(o);
    res.timeline_json = timeline(o, encode(t));
    if (o.failure) {
      ScheduleFailure f;
      f.kind = o.failure->kind;
      f.message = o.failure->message;
      f.token = f.minimal_token = encode(t);
      f.steps = f.minimal_steps = res.steps;
      f.minimal_choices = std::count_if(t.choices.begin(), t.choices.end(), [](std::uint32_t c) { return c != 0; });
      f.schedule = res.schedule;
      res.failure = std::move(f);
    }
    return res;
  }

  std::vector<std::string> words(const RunOutcome& o) const {
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < o.steps.size(); ++i)
      lines.push_back(fmt::format("{:>4}{} {}", i + 1, o.choices[i] != 0 ? "*" : ".", run_.describe(o.steps[i])));
    return lines;
  }

  /// Chrome Trace Event JSON of a recorded run: a lane per device, one
  /// microsecond per step; nothing in it depends on the wall clock.
  std::string timeline(const RunOutcome& o, const std::string& tok) const {
    std::string out = R"({"displayTimeUnit":"ns","traceEvents":[)";
    const auto name = [&](std::string_view ph, std::string_view what, std::int32_t tid, const std::string& value) {
      out += fmt::format(R"({{"ph":"{}","name":"{}","pid":1,"tid":{},"args":{{"name":)", ph, what, tid);
      json_string(out, value);
      out += "}},";
    };
    name("M", "process_name", 0, fmt::format("kernel '{}', schedule {}", program_->name, tok));
    for (std::int32_t l = 0; l < run_.lanes(); ++l) name("M", "thread_name", l, program_->mesh.describe_lane(l));
    for (std::size_t i = 0; i < o.steps.size(); ++i) {
      const StepRecord& r = o.steps[i];
      const char* what = r.action.kind == Action::Kind::run    ? (r.entered ? "enter and run" : "run")
                         : r.action.kind == Action::Kind::land ? "copy lands"
                                                               : "signal arrives";
      out += fmt::format(R"({{"ph":"X","cat":"schedule","name":"{}","pid":1,"tid":{},"ts":{},"dur":1,"args":{{)", what,
                         r.action.lane, i);
      out += fmt::format(R"("step":{},"chosen":{},"what":)", i + 1, o.choices[i]);
      json_string(out, run_.describe(r));
      out += "}},";
    }
    if (o.failure) {
      out += R"({"ph":"i","s":"g","name":"failure","pid":1,"tid":0,)";
      out += fmt::format(R"("ts":{},"args":{{"what":)", o.steps.size());
      json_string(out, o.failure->message);
      out += "}},";
    }
    out.back() = ']';
    out += "}\n";
    return out;
  }

  const Program& program() const noexcept { return *program_; }

 private:
  static std::vector<bool> inputs_of(const Executable& exe) {
    std::vector<bool> in;
    for (const auto& p : exe.params()) in.push_back(p.input);
    return in;
  }

  // Greedy: each choice off the default set back to it while the run still
  // fails the same way; what then runs is the new schedule (its later
  // choices may shift). Until a pass changes nothing, or 64 passes.
  std::vector<std::uint32_t> minimised(std::vector<std::uint32_t> best, ScheduleFailure::Kind kind,
                                       std::int64_t& runs) {
    for (int pass = 0; pass < 64; ++pass) {
      bool changed = false;
      for (std::size_t i = 0; i < best.size(); ++i) {
        if (best[i] == 0) continue;
        std::vector<std::uint32_t> candidate = best;
        candidate[i] = 0;
        Replay r(candidate);
        r.strict = false;
        const RunOutcome o = judged(r);
        ++runs;
        if (o.failure && o.failure->kind == kind) {
          best = o.choices;
          changed = true;
        }
      }
      if (!changed) break;
    }
    return best;
  }

  std::optional<RunFailure> compare(const RunOutcome& o) const {
    const auto outs = run_.outputs();
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const Buffer& now = *outs[k];
      const Buffer& ref = reference_[k];
      if (run_.output_equals(k, ref)) continue;
      const std::size_t es = size_of(now.dtype());
      std::int64_t e = 0;
      while (std::memcmp(now.data() + e * static_cast<std::int64_t>(es), ref.data() + e * static_cast<std::int64_t>(es),
                         es) == 0)
        ++e;
      const auto [param, device] = run_.output_of(k);
      std::string why;
      const auto sources = [&](const std::vector<std::pair<const Buffer*, std::int32_t>>& acc) {
        std::vector<std::int32_t> from;
        for (const auto& [b, s] : acc)
          if (b == &now) from.push_back(s / program_->mesh.cores());
        return from;
      };
      const auto before = sources(reference_accumulations_), after = sources(o.accumulations);
      if (before != after && !before.empty())
        why = fmt::format(
            "; accumulating copies landed in it in another order: from devices {} under the default schedule, {} "
            "under this one (floating-point addition is not associative: accumulate in a fixed order)",
            before, after);
      return RunFailure{ScheduleFailure::Kind::output,
                        fmt::format("refx: kernel '{}': the outputs depend on the schedule: parameter {} on device {}, "
                                    "element {} of {}{}, is {} under the default schedule and {} under this one{}",
                                    program_->name, param, device, unravel(now.shape(), e), now.dtype(), now.shape(),
                                    ref.as_double(e), now.as_double(e), why)};
    }
    return std::nullopt;
  }
  static std::string unravel(const Shape& s, std::int64_t flat) {
    std::vector<std::int64_t> idx(s.rank());
    for (std::size_t d = s.rank(); d-- > 0;) {
      idx[d] = flat % s[d];
      flat /= s[d];
    }
    return fmt::format("[{}]", fmt::join(idx, ", "));
  }

  std::shared_ptr<const Program> program_;  // as written: every copy moves, and may race
  ControlledRun run_;
  ScheduleToken token_;
  std::vector<Buffer> reference_;
  std::vector<std::pair<const Buffer*, std::int32_t>> reference_accumulations_;
  bool has_reference_ = false;
  RunOutcome last_;
};

inline bool enters_apart(const Program& p, DeviceEntry e) {
  if (e == DeviceEntry::automatic) return !p.barrier_ids.empty() || p.collective_id >= 0;
  return e == DeviceEntry::apart;
}

inline std::unique_ptr<Strategy> make_strategy(const ExploreOptions& o) {
  switch (o.strategy) {
    case ExploreStrategy::random: return std::make_unique<RandomWalk>(o.seed);
    case ExploreStrategy::pct: return std::make_unique<Pct>(o.seed, o.depth);
    case ExploreStrategy::exhaustive: return std::make_unique<Exhaustive>();
  }
  return nullptr;
}

/// The progress line on a terminal, at most every 200 ms.
class ExploreProgress {
 public:
  ExploreProgress(bool on, std::string kernel) : on_(on && isatty(STDERR_FILENO) != 0), kernel_(std::move(kernel)) {}
  ~ExploreProgress() {
    if (shown_) std::fputs("\r\033[K", stderr);
  }
  void update(std::int64_t runs, std::int64_t distinct) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    shown_ = true;
    std::fputs(fmt::format("\rexplore '{}': {} schedules, {} distinct", kernel_, runs, distinct).c_str(), stderr);
  }

 private:
  bool on_, shown_ = false;
  std::string kernel_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace detail

inline ExploreReport explore(const Executable& exe, const std::vector<Array>& args, const ExploreOptions& o,
                             refx::source_location loc) {
  const auto refuse = [&](std::string what) {
    return Error(detail::located_message(SourceLoc(loc), nullptr, "explore: {}", what));
  };
  if (o.runs <= 0) throw refuse(fmt::format("runs = {}: explore runs at least one schedule", o.runs));
  if (o.budget_seconds && !(*o.budget_seconds > 0))
    throw refuse(fmt::format("budget_seconds = {}: give a positive time, or none for no limit", *o.budget_seconds));
  if (o.depth < 1) throw refuse(fmt::format("depth = {}: PCT's depth is at least 1", o.depth));
  if (o.calls < 1) throw refuse(fmt::format("calls = {}: each device makes at least one call", o.calls));
  detail::check_in_place_arguments(exe, args, "explore");

  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  ExploreReport rep;
  rep.kernel = exe.program().name;
  rep.mesh = exe.mesh().describe();
  rep.strategy = o.strategy;

  const char* env = std::getenv("REFX_REPLAY");
  std::optional<detail::ScheduleToken> replaying;
  if (env != nullptr && *env != '\0') {
    detail::ScheduleToken t = detail::decode(env, "REFX_REPLAY");
    if (t.kernel == detail::token_name(exe.program().name)) replaying = std::move(t);
  }
  detail::Explorer ex(exe, args, replaying ? replaying->apart : detail::enters_apart(exe.program(), o.entry),
                      replaying ? replaying->races : o.detect_races, replaying ? replaying->calls : o.calls);
  std::int64_t extra = 0, complete = 0;
  std::unordered_set<std::uint64_t> orders;
  const auto finish = [&](const detail::RunOutcome& out, std::int64_t run) {
    rep.max_steps = std::max<std::int64_t>(rep.max_steps, static_cast<std::int64_t>(out.choices.size()));
    if (!out.stopped) orders.insert(out.order_hash);
    if (!out.failure) return false;
    rep.failure = ex.failure(out, run, o.minimise && !replaying, extra);
    if (!o.timeline.empty()) {
      ReplayResult r{std::nullopt, 0, {}, ex.timeline(ex.last(), rep.failure->minimal_token)};
      r.write_timeline(o.timeline);
    }
    return true;
  };

  // Run 0: the default schedule, whose outputs every other run must match.
  detail::Replay defaults;
  const detail::RunOutcome first = ex.judged(defaults);
  rep.runs = 1;
  bool failed = finish(first, 0);
  if (!failed) ex.keep_reference(first);
  if (replaying && !failed) {
    rep.replayed = true;
    ReplayResult r = ex.replayed(ex.check(env, "REFX_REPLAY"), "REFX_REPLAY");
    if (r.failure) {
      rep.failure = std::move(r.failure);
      if (!o.timeline.empty()) r.write_timeline(o.timeline);
    }
    ex.restore_reference();
    rep.seconds = elapsed();
    return rep;
  }

  std::unique_ptr<detail::Strategy> strategy = detail::make_strategy(o);
  if (auto* pct = dynamic_cast<detail::Pct*>(strategy.get())) pct->seen_steps(first.choices.size());
  detail::ExploreProgress progress(o.progress, rep.kernel);
  for (std::int64_t run = 1; !failed && run < o.runs; ++run) {
    if (o.budget_seconds && elapsed() > *o.budget_seconds) {
      rep.budget_exhausted = true;
      break;
    }
    if (!strategy->begin(run)) break;
    const detail::RunOutcome out =
        ex.judged([&](std::span<const detail::Action> en, std::size_t step,
                      const detail::RunOutcome& so_far) { return strategy->choose(en, step, so_far); },
                  false, strategy->footprints());
    strategy->end(out);
    ++rep.runs;
    complete += out.stopped ? 0 : 1;
    failed = finish(out, run);
    progress.update(rep.runs, static_cast<std::int64_t>(orders.size()));
  }
  rep.finished = !failed && strategy->finished();
  // Exhaustive search runs each class to its end once (run 0 is its first).
  rep.distinct = o.strategy == ExploreStrategy::exhaustive ? std::max<std::int64_t>(complete, 1)
                                                           : static_cast<std::int64_t>(orders.size());
  ex.restore_reference();
  rep.seconds = elapsed();
  return rep;
}

inline ReplayResult replay(const Executable& exe, const std::vector<Array>& args, std::string_view token,
                           refx::source_location loc) {
  detail::check_in_place_arguments(exe, args, "replay");
  const std::string where = fmt::format("replay (at {})", SourceLoc(loc));
  const detail::ScheduleToken t = detail::decode(token, where);
  detail::Explorer ex(exe, args, t.apart, t.races, t.calls);
  ex.check(token, where);
  detail::Replay defaults;
  const detail::RunOutcome first = ex.judged(defaults);
  if (!first.failure) ex.keep_reference(first);
  return ex.replayed(t, where);
}

inline void ReplayResult::write_timeline(const std::string& path) const {
  std::ofstream f(path, std::ios::binary);
  if (f) f << timeline_json;
  if (!f)
    throw Error(fmt::format("refx: cannot write the schedule's timeline to '{}': {}", path, std::strerror(errno)));
}

inline std::string ExploreReport::to_string() const {
  std::string head =
      fmt::format("explore '{}' on mesh {} ({}): {} schedule{}, {} distinct, longest {} steps, {:.2f} s", kernel, mesh,
                  refx::to_string(strategy), runs, runs == 1 ? "" : "s", distinct, max_steps, seconds);
  if (replayed) head += ", replaying REFX_REPLAY";
  if (!failure) {
    if (strategy == ExploreStrategy::exhaustive && !replayed)
      head += finished ? ": every distinguishable order ran, none failed"
                       : ": stopped before every order ran (raise runs or the budget), none failed";
    else head += budget_exhausted ? ": the time budget ran out, none failed" : ": none failed";
    return head + "\n";
  }
  const ScheduleFailure& f = *failure;
  std::string s = fmt::format("{}: schedule {} failed ({})\n{}\n", head, f.run, refx::to_string(f.kind), f.message);
  s += fmt::format("  replay: REFX_REPLAY={} (or refx::replay(exe, args, token))\n", f.token);
  s += fmt::format("  closest to the default: {} choice{} off it, {} steps: {}\n", f.minimal_choices,
                   f.minimal_choices == 1 ? "" : "s", f.minimal_steps, f.minimal_token);
  for (const std::string& line : f.schedule) s += "  " + line + "\n";
  return s;
}

inline std::ostream& operator<<(std::ostream& os, const ExploreReport& r) { return os << r.to_string(); }

}  // namespace refx
