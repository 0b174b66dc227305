// The graph-builder fuzz target (tests/fuzz/graph_fuzz_target.hpp) on random
// inputs, with every compiler (the coverage-guided libFuzzer build of the
// same target is tests/fuzz/graph_fuzzer.cpp, preset "fuzz"): arbitrary op
// sequences never crash, and every rejection is a refx error.
//
// REFX_GRAPH_FUZZ_INPUTS (default 20000; 3000 in sanitizer builds) inputs
// from seed REFX_GRAPH_FUZZ_SEED (default 1). A crash prints the input's
// index and seed; rerun with that seed and REFX_GRAPH_FUZZ_INPUTS=1.

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <random>
#include <unistd.h>

#include "fuzz/graph_fuzz_target.hpp"
#include "reliability/reliability_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

std::atomic<std::uint64_t> g_current_seed{0};

extern "C" void report_crash(int sig) {
  char buf[128];
  const int n = std::snprintf(buf, sizeof buf, "\ngraph fuzz: signal %d on the input of seed %llu\n", sig,
                              static_cast<unsigned long long>(g_current_seed.load()));
  if (n > 0) (void)!write(2, buf, static_cast<std::size_t>(n));
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::vector<std::uint8_t> input_of(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::size_t n = 1 + rng() % (rng() % 4 == 0 ? 2000 : 300);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

TEST(GraphFuzz, ArbitraryOpSequencesNeverCrashAndRaiseRefxErrors) {
  const std::int64_t inputs = env_count("REFX_GRAPH_FUZZ_INPUTS", kSanitized ? 3000 : 20000);
  const auto base = static_cast<std::uint64_t>(env_count("REFX_GRAPH_FUZZ_SEED", 1));
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, report_crash);
  Heartbeat dog(std::chrono::seconds(kSanitized ? 100 : 60));  // below ctest's 120 s
  fuzz::Stats total;
  for (std::int64_t k = 0; k < inputs; ++k) {
    const std::uint64_t seed = base + static_cast<std::uint64_t>(k);
    g_current_seed = seed;
    dog.beat(fmt::format("graph fuzz, seed {}", seed));
    const auto in = input_of(seed);
    try {
      total += fuzz::run_one(in.data(), in.size());
    } catch (const std::exception& e) {
      FAIL() << "input of seed " << seed << " raised something other than a refx error: " << e.what()
             << "\nreproduce: REFX_GRAPH_FUZZ_SEED=" << seed << " REFX_GRAPH_FUZZ_INPUTS=1 reliability_graph_fuzz_test";
    }
  }
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
  report(inputs, "graph-builder fuzz inputs (random bytes)");
  std::printf("binds %lld (rejected %lld), views %lld, nested bodies %lld; graphs %lld (trace errors %lld), verified %lld "
              "(rejected %lld), compiled unverified %lld (errors %lld)\n",
              static_cast<long long>(total.binds), static_cast<long long>(total.bind_errors),
              static_cast<long long>(total.views), static_cast<long long>(total.scopes),
              static_cast<long long>(total.graphs), static_cast<long long>(total.trace_errors),
              static_cast<long long>(total.verified), static_cast<long long>(total.verify_errors),
              static_cast<long long>(total.compiled), static_cast<long long>(total.compile_errors));
  EXPECT_GT(total.graphs, inputs / 2);
  EXPECT_GT(total.verified, 0);
  EXPECT_GT(total.verify_errors, 0);
}

}  // namespace
