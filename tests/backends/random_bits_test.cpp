// Random bits on N devices: the reference interpreter (one device, or the
// lockstep mesh) and the threaded runtime (compiled: passes drop the unused
// draw and reorder ops) give the documented bits on every device, bit for
// bit, for N = 1, 2, 4, 8; each device's stream differs from every other's;
// and the runtime gives the same bits whatever its worker count and task
// order (shuffled), call after call.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <refx/ir/detail/threefry.hpp>

#include "support/backend_cases.hpp"
#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing::backends;
using refx::detail::ThreefryWords;
using refx::testing::kTestLimit;
using refx::testing::Watchdog;
using U32 = std::uint32_t;

constexpr std::int64_t W = 256;
constexpr int L = 4;

/// Draws: an unused one (call 0), a (call 1), one row of `rows` per loop
/// iteration (call 2), b (call 3).
const auto draws = [](VmemRef<U32, W> a, VmemRef<U32, L, W> rows, VmemRef<U32, W> b) {
  prng_seed(1234);
  (void)prng_random_bits<8>();
  a.store(prng_random_bits<W>());
  fori_loop(0, L, [&](Scalar<std::int32_t> i) { rows.at(i, all).store(prng_random_bits<W>()); });
  b.store(prng_random_bits<W>());
};

/// What docs/tutorial.md ("Random bits") says device d draws: word i of a
/// call is the xor of the block at counter i of the key (0, seed) folded
/// with the device, the core (0), the call and the loop indices.
U32 expected_word(U32 device, U32 call, std::vector<U32> indices, std::int64_t i) {
  ThreefryWords k{0u, 1234u};
  for (U32 w : {device, 0u, call}) k = detail::threefry_fold_in(k, w);
  for (U32 w : indices) k = detail::threefry_fold_in(k, w);
  const ThreefryWords block = detail::threefry2x32(k, {0u, static_cast<U32>(i)});
  return block[0] ^ block[1];
}

Shards<U32> run_draws(const Backend& b) {
  const int n = b.devices;
  return b.run<U32>(
      draws, {Shape{W}, Shape{L, W}, Shape{W}},
      {filled_per_device<U32>(n, W, 0u), filled_per_device<U32>(n, L * W, 0u), filled_per_device<U32>(n, W, 0u)});
}

::testing::AssertionResult documented_bits(const Shards<U32>& out) {
  REFX_BACKEND_CHECK(
      expect_all("a", out[0], W, [](int d, std::int64_t i) { return expected_word(static_cast<U32>(d), 1, {}, i); }));
  REFX_BACKEND_CHECK(expect_all("rows", out[1], L * W, [](int d, std::int64_t i) {
    return expected_word(static_cast<U32>(d), 2, {static_cast<U32>(i / W)}, i % W);
  }));
  return expect_all("b", out[2], W, [](int d, std::int64_t i) { return expected_word(static_cast<U32>(d), 3, {}, i); });
}

std::vector<Backend> interpreter_and_runtime() {
  std::vector<Backend> out;
  for (Kind k : {Kind::interpreter, Kind::runtime})
    for (int n : {1, 2, 4, 8}) out.push_back(Backend{k, n, nullptr});
  return out;
}

struct CaseName {
  std::string operator()(const ::testing::TestParamInfo<Backend>& info) const { return info.param.name(); }
};

class RandomBitsOnEveryBackend : public ::testing::TestWithParam<Backend> {
 protected:
  Watchdog dog_{kTestLimit, "random bits on " + GetParam().name()};
};
INSTANTIATE_TEST_SUITE_P(Backends, RandomBitsOnEveryBackend, ::testing::ValuesIn(interpreter_and_runtime()),
                         CaseName{});

TEST_P(RandomBitsOnEveryBackend, EveryDeviceDrawsTheDocumentedBits) {
  EXPECT_TRUE(documented_bits(run_draws(GetParam())));
}

TEST_P(RandomBitsOnEveryBackend, DevicesDrawIndependentStreams) {
  const Shards<U32> out = run_draws(GetParam());
  for (std::size_t p = 0; p < out.size(); ++p)
    for (std::size_t d = 0; d < out[p].size(); ++d)
      for (std::size_t e = d + 1; e < out[p].size(); ++e) {
        std::int64_t same = 0;  // equal words at equal places: 2^-32 each by chance
        for (std::size_t i = 0; i < out[p][d].size(); ++i) same += out[p][d][i] == out[p][e][i];
        EXPECT_LE(same, 1) << "parameter " << p << ", devices " << d << " and " << e;
      }
}

TEST(RandomBitsRuntime, SameBitsWhateverTheWorkersAndTheTaskOrder) {
  Watchdog dog(kTestLimit, "random bits with several worker counts");
  for (unsigned workers : {1u, 2u, 3u, 8u})
    for (std::uint64_t shuffle : {std::uint64_t{0}, std::uint64_t{7}}) {
      Runtime rt(RuntimeOptions{.workers = workers, .shuffle_seed = shuffle});
      const Backend b{Kind::runtime, 8, &rt};
      for (int call = 0; call < 2; ++call)  // the second call reuses the devices' contexts
        EXPECT_TRUE(documented_bits(run_draws(b))) << workers << " workers, shuffle " << shuffle << ", call " << call;
    }
}

}  // namespace
