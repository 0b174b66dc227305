#pragma once
// refx::explore: the schedules a multi-device kernel can meet, tried one by
// one, and the one that broke it replayed exactly (docs/runtime.md,
// "Controlled schedules"). One call of an Executable runs on one thread
// under a controlled scheduler: every scheduling point -- a device running
// to its next wait, a copy landing, a signal arriving -- is chosen by a
// strategy, with the runtime's checks on. A schedule that fails (an error,
// a deadlock, a race, a semaphore not back to 0, a copy landing in a device
// that has not entered the kernel or has left it, outputs that differ
// bitwise from the default schedule's) is reported with a token that
// replays it, and the schedule closest to the default that still fails.
//
//   refx::ExploreReport r = refx::explore(exe, {x, out}, {.strategy = refx::ExploreStrategy::pct, .runs = 1000});
//   EXPECT_TRUE(r.ok()) << r;                  // the failure, its token and its minimal schedule
//   refx::replay(exe, {x, out}, token).write_timeline("failing.json");
//
// REFX_REPLAY=<token> in the environment makes explore() of the token's
// kernel run that one schedule instead of exploring.

#include <string_view>
#include <vector>

#include <refx/core/source_location.hpp>
#include <refx/explore/report.hpp>
#include <refx/kernel.hpp>

namespace refx {

/// Runs schedules of one call of `exe` (one Array per parameter, in place,
/// as call_in_place) until one fails or `o.runs` have run. Afterwards the
/// Arrays hold the default schedule's results. Throws refx::Error naming
/// `loc` for a bad option or argument, and for a REFX_REPLAY token of this
/// kernel that does not fit it.
ExploreReport explore(const Executable& exe, const std::vector<Array>& args, const ExploreOptions& o = {},
                      refx::source_location loc = refx::source_location::current());

/// Reruns exactly the schedule of `token` (ScheduleFailure::token or
/// minimal_token); the Arrays hold its results afterwards. Throws
/// refx::Error naming what does not match for a malformed token or one made
/// for another kernel, mesh, version of the kernel or of refx.
ReplayResult replay(const Executable& exe, const std::vector<Array>& args, std::string_view token,
                    refx::source_location loc = refx::source_location::current());

}  // namespace refx

#include <refx/explore/detail/explore.hpp>
