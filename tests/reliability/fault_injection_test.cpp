// Fault injection: exceptions thrown at random ops on random devices of
// random SPMD programs (spmd_programs.hpp), from the test side only: a fault
// point is an extension primitive (extend::bind_effect of a primitive defined
// with define_primitive) whose implementation throws when the FaultPlan names
// its (device, site, arrival); io_callbacks consult the same plan. For every
// call:
//   - a fault that fired makes the call raise refx::RuntimeError naming the
//     device and the injected message (never a wrong result, never a hang);
//   - a fault that did not fire (its site not reached that often on that
//     device) leaves the results equal to the reference;
//   - the same runtime then runs the program again, unarmed, correctly.
// A Heartbeat aborts the binary with the program's seed if a call hangs.
//
// REFX_FAULTS (default 1000; 400 in sanitizer builds) faults must fire, over
// 4 tests; programs from seed REFX_FUZZ_SEED (default 1).

#include <gtest/gtest.h>

#include "reliability/spmd_programs.hpp"
#include <refx/runtime/runtime.hpp>

namespace {

using namespace refx;
using namespace refx::testing;
using namespace refx::testing::spmd;

constexpr int kShards = 4;

struct Tally {
  int attempts = 0, fired = 0, raised = 0, clean = 0, reruns = 0, in_callbacks = 0;
};

template <class T>
void attack(std::uint32_t seed, std::mt19937_64& rng, Tally& t, int wanted) {
  const Spec spec = draw_spec(seed, true);
  const Built b = build<T>(spec);
  if (b.sites == 0) return;
  fault_plan().disarm();
  const Outcome want = reference<T>(b);
  const int n = spec.devices();
  for (int attempt = 0; attempt < 3 && t.fired < wanted; ++attempt) {
    const std::size_t c = rng() % runtime_configs().size();
    Runtime& rt = runtime(c);
    rt.pool().set_shuffle(rng() | 1);
    const int device = static_cast<int>(rng() % static_cast<unsigned>(n));
    const int site = static_cast<int>(rng() % static_cast<unsigned>(b.sites));
    const int hit = static_cast<int>(rng() % 4 == 0 ? rng() % 3 : 0);
    const std::string what = fmt::format("{} on '{}': fault at site {} of {}, device {}, arrival {}", spec.describe(),
                                         runtime_configs()[c].name, site, b.sites, device, hit);
    ++t.attempts;
    fault_plan().arm(device, site, hit);
    std::string error;
    Outcome got;
    try {
      got = collect(dispatch<T>(b, rt), rt);
    } catch (const RuntimeError& e) {
      error = e.what();
    } catch (const std::exception& e) {
      fault_plan().disarm();
      FAIL() << what << ": raised something other than refx::RuntimeError: " << e.what();
    }
    fault_plan().disarm();
    if (!error.empty()) {  // the failed call's effects (those before the fault) are not compared
      rt.drain();
      log_sink().take();
    }
    const bool fired = fault_plan().fired.load();
    if (fired) {
      ++t.fired;
      ASSERT_FALSE(error.empty()) << what << ": the fault fired but the call succeeded";
      ASSERT_NE(error.find("injected fault"), std::string::npos) << what << ": " << error;
      ASSERT_NE(error.find(fmt::format("refx: device {}:", device)), std::string::npos) << what << ": " << error;
      ++t.raised;
      if (error.find("io_callback") != std::string::npos) ++t.in_callbacks;
    } else {
      ASSERT_TRUE(error.empty()) << what << ": no fault fired but the call failed: " << error;
      ASSERT_TRUE(same_outputs<T>(got, want)) << what << ": no fault fired, yet the results differ";
      ++t.clean;
    }
    // The runtime is still usable: the same program, unarmed, is correct.
    Outcome again;
    try {
      again = collect(dispatch<T>(b, rt), rt);
    } catch (const std::exception& e) {
      FAIL() << what << ": the next call on the same runtime failed: " << e.what();
    }
    ASSERT_TRUE(same_outputs<T>(again, want)) << what << ": the next call on the same runtime is wrong";
    ++t.reruns;
  }
}

class FaultInjection : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Shards, FaultInjection, ::testing::Range(0, kShards));

TEST_P(FaultInjection, EveryCallSucceedsCorrectlyOrRaisesAndTheRuntimeStaysUsable) {
  const std::int64_t total = env_count("REFX_FAULTS", kSanitized ? 400 : 1000);
  const auto base = static_cast<std::uint32_t>(env_count("REFX_FUZZ_SEED", 1));
  const int shard = GetParam();
  const auto wanted = static_cast<int>(total * (shard + 1) / kShards - total * shard / kShards);
  Heartbeat dog(std::chrono::seconds(kSanitized ? 100 : 60));  // below ctest's 120 s
  std::mt19937_64 rng(base * 7919ULL + static_cast<std::uint64_t>(shard));
  Tally t;
  // Programs of this shard: seeds base + shard, base + shard + kShards, ...
  for (std::uint32_t k = 0; t.fired < wanted && k < 100000; ++k) {
    const std::uint32_t seed = base + static_cast<std::uint32_t>(shard) + k * kShards;
    dog.beat(fmt::format("fault injection, seed {}", seed));
    if (seed % 4 == 0) attack<std::int32_t>(seed, rng, t, wanted);
    else attack<float>(seed, rng, t, wanted);
    if (HasFatalFailure()) return;
  }
  report(t.fired, "faults injected (each raised; the runtime then ran correctly)");
  report(t.attempts, "fault-injection calls (fired or not)");
  std::printf("shard %d: %d attempts, %d fired (%d in io_callbacks), %d clean, %d reruns\n", shard, t.attempts, t.fired,
              t.in_callbacks, t.clean, t.reruns);
  EXPECT_EQ(t.fired, wanted);
  EXPECT_EQ(t.raised, t.fired);
  if (wanted >= 100) {
    EXPECT_GT(t.in_callbacks, 0);
    EXPECT_GT(t.clean, 0);
  }
}

}  // namespace
