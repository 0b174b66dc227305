#pragma once
// The types of refx::explore (refx/explore.hpp): its options, what it
// reports, a failing schedule and a replayed one.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace refx {

/// How explore() chooses among the enabled scheduling points.
enum class ExploreStrategy {
  /// Uniformly at random at every point (a random walk), seeded per run.
  random,
  /// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010):
  /// random priorities, the running one lowered at depth - 1 random points.
  /// A failure that needs `depth` orderings, in a kernel of n threads
  /// (devices, copies, signals) and k scheduling points, shows with
  /// probability at least 1 / (n * k^(depth-1)) per run.
  pct,
  /// Every order that a device could tell apart, depth first, once each
  /// (sleep sets over commuting points); ExploreReport::finished says whether
  /// it covered them all within the run limit.
  exhaustive,
};

/// When devices enter the kernel.
enum class DeviceEntry {
  /// `apart` for a kernel that synchronises itself (it uses a barrier
  /// semaphore, or was given a collective_id), `together` otherwise: Pallas
  /// puts a device barrier at the start of a communicating kernel that has
  /// neither.
  automatic,
  /// Every device has entered before any runs.
  together,
  /// Each device enters when the strategy runs it first: a copy or a signal
  /// (but for a barrier semaphore's) that lands in a device that has not
  /// entered yet fails.
  apart,
};

struct ExploreOptions {
  ExploreStrategy strategy = ExploreStrategy::pct;
  /// Schedules to run at most, the default one included (> 0).
  std::int64_t runs = 1000;
  std::uint64_t seed = 1;
  /// PCT's bug depth (>= 1).
  std::int32_t depth = 3;
  /// Stop after this long (> 0 when given); the report says how far it got.
  std::optional<double> budget_seconds = std::nullopt;
  /// Look for the schedule closest to the default that fails the same way.
  bool minimise = true;
  /// The happens-before race detector (RuntimeOptions::detect_races).
  bool detect_races = true;
  DeviceEntry entry = DeviceEntry::automatic;
  /// Calls of the kernel each device makes, back to back (>= 1). With more
  /// than one, a device that has finished a call enters the next when the
  /// strategy runs it (`together`: once every device has finished it); a
  /// copy or signal of one call that lands in a device in another call, and
  /// a semaphore not back to 0 when a device leaves a call, fail
  /// (ScheduleFailure::Kind::carried).
  std::int32_t calls = 1;
  /// Where the failing schedule's timeline goes ("": nowhere).
  std::string timeline = {};
  /// A progress line on stderr when it is a terminal.
  bool progress = true;
};

/// A schedule that failed.
struct ScheduleFailure {
  enum class Kind {
    error,        ///< a device threw (an index out of bounds, a failed check)
    deadlock,     ///< nothing can run and some device waits
    race,         ///< unordered conflicting accesses
    unbalanced,   ///< a semaphore not back to 0 when the kernel ended
    not_entered,  ///< a copy or signal landed in a device before it entered
    left,         ///< a copy or signal landed in a device after it left
    output,       ///< the outputs differ bitwise from the default schedule's
    carried,      ///< a copy, a signal or a semaphore's count reached another call
  };
  Kind kind = Kind::error;
  /// The refx: message of the minimal schedule (below), as the threaded
  /// runtime would say it where it has one.
  std::string message;
  /// Replays the failing schedule (replay(), or REFX_REPLAY=token).
  std::string token;
  std::int64_t steps = 0;  ///< its scheduling points
  std::int64_t run = 0;    ///< which run found it (0: the default schedule)
  /// The failing schedule with the fewest choices off the default found, and
  /// each of its steps in words.
  std::string minimal_token;
  std::int64_t minimal_steps = 0, minimal_choices = 0;
  std::vector<std::string> schedule;
};

std::string_view to_string(ScheduleFailure::Kind k);
std::string_view to_string(ExploreStrategy s);

struct ExploreReport {
  std::string kernel, mesh;
  ExploreStrategy strategy = ExploreStrategy::pct;
  std::int64_t runs = 0;  ///< schedules run (minimisation's not counted)
  /// Runs that differ in what some device saw: its steps, and which copies
  /// and signals arrived between two of them. Exhaustive search counts the
  /// classes it ran instead (two runs are in one class when they order
  /// every two conflicting steps alike).
  std::int64_t distinct = 0;
  std::int64_t max_steps = 0;  ///< the longest schedule's points
  /// exhaustive: every distinguishable order was run.
  bool finished = false;
  bool budget_exhausted = false;
  /// REFX_REPLAY named this kernel: one schedule was replayed.
  bool replayed = false;
  double seconds = 0;
  std::optional<ScheduleFailure> failure;

  bool ok() const noexcept { return !failure; }
  /// One line when nothing failed (what was covered); else the failure, its
  /// tokens and the minimal schedule step by step.
  std::string to_string() const;
};
std::ostream& operator<<(std::ostream& os, const ExploreReport& r);

/// One schedule, replayed.
struct ReplayResult {
  std::optional<ScheduleFailure> failure;
  std::int64_t steps = 0;
  std::vector<std::string> schedule;  ///< each step in words
  /// Chrome Trace Event JSON, one lane per device, one microsecond per step:
  /// the same text for the same schedule.
  std::string timeline_json;
  /// Writes timeline_json to `path`; throws refx::Error naming the path.
  void write_timeline(const std::string& path) const;
};

}  // namespace refx
