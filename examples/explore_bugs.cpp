// Three kernels with a bug that the threaded runtime's run does not show,
// found by refx::explore, minimised and replayed exactly (docs/tutorial.md,
// "Every schedule a kernel can meet"):
//   1. a ring shift that copies into its neighbour without the entry
//      barrier (the published all_gather's main_barrier removed);
//   2. a fast path that skips a handshake when a signal is already there: a
//      deadlock in the orders where it is;
//   3. two send slots refilled after "a" copy left, as if copies landed in
//      the order they started: a late copy reads the slot's new contents.
// Each fixed form passes every order exhaustive search can tell apart (or
// a thousand PCT schedules, for the ring on eight devices).

#include <cstdio>
#include <cstdlib>
#include <string>

#include <refx/explore.hpp>
#include <refx/refx.hpp>

using namespace refx;

namespace {

constexpr std::int64_t kN = 128;

int failures = 0;
void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "explore_bugs: %s\n", what.c_str());
    ++failures;
  }
}

Array iota(int devices, Shape s) {
  return Array::generate<float>(devices, s, [](int d, std::int64_t i) { return static_cast<float>(d * 1000 + i); });
}
Array zeros(int devices, Shape s) {
  return Array::generate<float>(devices, s, [](int, std::int64_t) { return 0.0f; });
}

Executable ring_shift(int devices, bool barrier) {
  return kernel([barrier](HbmRef<const float, kN> x, HbmRef<float, kN> y) {
           run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
             const auto me = axis_index("x");
             const auto n = static_cast<std::int32_t>(mesh_axis_size("x"));
             const auto right = (me + 1) % n, left = (me + n - 1) % n;
             // [snippet:entry-barrier]
             if (barrier) {  // no device writes into a neighbour that has not entered
               const BarrierSemaphore b = get_barrier_semaphore();
               semaphore_signal(b, 1, left);
               semaphore_signal(b, 1, right);
               semaphore_wait(b, 2);
             }
             // [/snippet]
             auto c = make_async_remote_copy(x, y, send, recv, right);
             c.start();
             c.wait_send();
             c.wait_recv();
           });
         })
      .name(barrier ? "ring_shift" : "ring_shift_no_barrier")
      .collective_id(0)  // the kernel synchronises itself: its devices enter apart
      .compile(Mesh{{"x", devices}});
}

Executable fast_path(bool fixed) {
  return kernel([fixed](VmemRef<const float, kN> x, VmemRef<float, kN> y) {
           run_scoped([&](RegularSemaphore flag, RegularSemaphore go) {
             const auto me = axis_index("x");
             when(me == 0, [&] {
               if (fixed) semaphore_signal(go, 1, 2);
               else when(semaphore_read(flag) == 0, [&] { semaphore_signal(go, 1, 2); });  // "nobody is waiting"
               semaphore_wait(flag, 1);
             });
             when(me == 1, [&] { semaphore_signal(flag, 1, 0); });
             when(me == 2, [&] { semaphore_wait(go, 1); });
             y.store(x.load() * 2.0f);
           });
         })
      .name(fixed ? "handshake" : "fast_path")
      .passes(passes::Options{.verify = false})  // the verifier cannot count the conditional signal
      .compile(Mesh{{"x", 3}});
}

constexpr std::int64_t kSteps = 4;
Executable stream(bool fixed) {
  return kernel([fixed](VmemRef<const float, kSteps, kN> x, HbmRef<float, kSteps, kN> y) {
           run_scoped([&](VmemRef<float, 2, kN> slot, DmaSemaphores<2> send, DmaSemaphore recv) {
             const auto me = axis_index("x");
             // [snippet:one-send-semaphore]
             // One send semaphore for both slots (the bug) or one per slot.
             const auto sem = [&](std::int64_t k) { return send.at(fixed ? k % 2 : 0); };
             // [/snippet]
             when(me == 0, [&] {
               for (std::int64_t k = 0; k < kSteps; ++k) {
                 auto c = make_async_remote_copy(slot.at(k % 2), y.at(k), sem(k), recv, 1);
                 if (k >= 2) c.wait_send();  // meant for copy k-2, the slot's last
                 slot.at(k % 2).store(x.at(k).load());
                 c.start();
               }
               for (std::int64_t k = kSteps - 2; k < kSteps; ++k)
                 make_async_remote_copy(slot.at(k % 2), y.at(k), sem(k), recv, 1).wait_send();
             });
             when(me == 1, [&] {
               for (std::int64_t k = 0; k < kSteps; ++k) make_async_remote_copy(slot.at(0), y.at(k), sem(k), recv, 1).wait_recv();
             });
           });
         })
      .name(fixed ? "stream_fixed" : "stream")
      .passes(passes::Options{.verify = false})
      .compile(Mesh{{"x", 2}});
}

// Explores `exe`, prints the report, and checks that it fails as `kind`
// after the default schedule, and that the minimal schedule replays to the
// identical timeline.
void expect_found(const Executable& exe, const std::vector<Array>& args, ScheduleFailure::Kind kind,
                  const ExploreOptions& o) {
  const ExploreReport r = explore(exe, args, o);
  std::fputs(r.to_string().c_str(), stdout);
  if (!r.failure) return check(false, exe.program().name + ": no failure found");
  check(r.failure->kind == kind, exe.program().name + ": found '" + std::string(to_string(r.failure->kind)) + "'");
  const ReplayResult a = replay(exe, args, r.failure->minimal_token);
  const ReplayResult b = replay(exe, args, r.failure->minimal_token);
  a.write_timeline(exe.program().name + ".schedule.json");
  check(a.failure && a.failure->message == r.failure->message,
        exe.program().name + ": the replay fails otherwise: " + (a.failure ? a.failure->message : std::string("no failure")));
  check(a.timeline_json == b.timeline_json, exe.program().name + ": two replays differ");
}

void expect_clean(const Executable& exe, const std::vector<Array>& args, const ExploreOptions& o) {
  const ExploreReport r = explore(exe, args, o);
  std::fputs(r.to_string().c_str(), stdout);
  check(r.ok() && (o.strategy != ExploreStrategy::exhaustive || r.finished),
        exe.program().name + ": the fixed kernel does not pass every order");
}

}  // namespace

int main() {
  const ExploreOptions pct{.strategy = ExploreStrategy::pct, .runs = 1000, .seed = 1, .depth = 3};
  const ExploreOptions every{.strategy = ExploreStrategy::exhaustive, .runs = 200000};

  std::puts("1. A copy into a neighbour that has not entered the kernel");
  {
    Array x = iota(4, Shape{kN}), y = zeros(4, Shape{kN});
    ring_shift(4, false)({x}).at(0).block_until_ready();  // the threaded runtime: no complaint
    expect_found(ring_shift(4, false), {x, y}, ScheduleFailure::Kind::not_entered, pct);
    expect_clean(ring_shift(3, true), {iota(3, Shape{kN}), zeros(3, Shape{kN})}, every);
    expect_clean(ring_shift(8, true), {iota(8, Shape{kN}), zeros(8, Shape{kN})}, pct);
  }

  std::puts("\n2. A deadlock in the orders where a signal comes early");
  {
    Array x = iota(3, Shape{kN}), y = zeros(3, Shape{kN});
    expect_found(fast_path(false), {x, y}, ScheduleFailure::Kind::deadlock, pct);
    expect_clean(fast_path(true), {x, y}, every);
  }

  std::puts("\n3. A slot refilled while a late copy still reads it");
  {
    const Shape s{kSteps, kN};
    Array x = iota(2, s), y = zeros(2, s);
    expect_found(stream(false), {x, y}, ScheduleFailure::Kind::race, pct);
    ExploreOptions no_races = every;
    no_races.detect_races = false;  // then the outputs differ from the default schedule's
    expect_found(stream(false), {x, y}, ScheduleFailure::Kind::output, no_races);
    expect_clean(stream(true), {x, y}, every);
  }

  if (failures != 0) return EXIT_FAILURE;
  std::puts("\nexplore_bugs: each bug found, minimised and replayed; each fix passes");
  return EXIT_SUCCESS;
}
