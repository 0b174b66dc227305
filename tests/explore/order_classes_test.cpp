// Exhaustive search's coverage (include/refx/explore/detail/strategies.hpp):
// on small kernels, every order class that thousands of random walks reach
// is one that the dynamic partial-order reduction ran, and it ran each
// class to the end once. A reduction that pruned an order the kernel can
// tell apart fails here (Flanagan-Godefroid's backtracking with sleep sets
// did, on all three).

#include <gtest/gtest.h>

#include <set>

#include <refx/explore.hpp>

#include "explore/explore_kernels.hpp"
#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;
using namespace refx::testing::explore_kernels;

struct Classes {
  std::set<std::uint64_t> exhaustive, random;
  std::int64_t complete = 0;  // exhaustive runs not cut short as redundant
};

Classes classes(const Executable& exe, const std::vector<Array>& args, bool apart, int walks) {
  std::vector<bool> inputs;
  for (const auto& p : exe.params()) inputs.push_back(p.input);
  detail::ControlledRun run(exe.shared_program(), args, inputs, apart, false, 1);
  Classes c;
  detail::Exhaustive dpor;
  for (std::int64_t r = 1; dpor.begin(r); ++r) {
    const detail::RunOutcome o = run.run(
        [&](std::span<const detail::Action> en, std::size_t step, const detail::RunOutcome& so_far) {
          return dpor.choose(en, step, so_far);
        },
        false, true);
    dpor.end(o);
    EXPECT_FALSE(o.failure) << o.failure->message;
    if (o.stopped) continue;
    ++c.complete;
    c.exhaustive.insert(detail::order_class(o));
  }
  detail::RandomWalk walk(7);
  for (int r = 1; r <= walks; ++r) {
    walk.begin(r);
    const detail::RunOutcome o = run.run(
        [&](std::span<const detail::Action> en, std::size_t step, const detail::RunOutcome& so_far) {
          return walk.choose(en, step, so_far);
        },
        false, true);
    c.random.insert(detail::order_class(o));
  }
  return c;
}

void expect_covered(const Classes& c) {
  std::vector<std::uint64_t> missed;
  std::set_difference(c.random.begin(), c.random.end(), c.exhaustive.begin(), c.exhaustive.end(),
                      std::back_inserter(missed));
  EXPECT_TRUE(missed.empty()) << missed.size() << " of " << c.random.size()
                              << " classes random walks reached were not run by exhaustive search ("
                              << c.exhaustive.size() << " classes)";
  // Flanagan-Godefroid DPOR with sleep sets may run a class more than once, not often.
  std::printf("complete %lld classes %zu random %zu\n", (long long)c.complete, c.exhaustive.size(), c.random.size());
  EXPECT_LE(c.complete, 2 * static_cast<std::int64_t>(c.exhaustive.size()));
}

TEST(OrderClasses, RingAllGatherOnThreeDevices) {
  Watchdog dog(kTestLimit, "ring all-gather classes");
  const Classes c = classes(ring_gather<3>(), {tagged(3), zeros(3, Shape{3, kN})}, false, 3000);
  expect_covered(c);
  EXPECT_GT(c.exhaustive.size(), 10000u);
}

TEST(OrderClasses, NeighbourBarrierShiftOnThreeDevicesEnteringApart) {
  Watchdog dog(kTestLimit, "shift classes");
  expect_covered(classes(shift(3, true), {tagged(3), zeros(3)}, true, 3000));
}

TEST(OrderClasses, TwoSlotStreamWithoutTheRaceDetector) {
  Watchdog dog(kTestLimit, "slots classes");
  const Shape s{kSteps, kN};
  expect_covered(classes(slots(), {tagged(2, s), zeros(2, s)}, false, 3000));
}

}  // namespace
