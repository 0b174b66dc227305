// The generator behind prng_random_bits (ir/detail/threefry.hpp) against
// published answers, and stochastic rounding of single elements
// (ir/detail/stochastic_round.hpp) against its definition: over every value
// of the random bits that matter, the rounding goes up exactly as often as
// the fraction of the step says.
//
// Known answers: the Random123 known-answer vectors for threefry2x32 at 13
// and 20 rounds (Random123's examples/kat_vectors, which JAX's
// random_test.py testThreefry2x32 also uses: format "counter, key, result"),
// and the keys jax.random.split(jax.random.key(0), 8) gives with
// jax_threefry_partitionable (row j is the block of key (0, 0) at counter
// (0, j)).

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <refx/ir/detail/stochastic_round.hpp>
#include <refx/ir/detail/threefry.hpp>

using refx::bf16;
using refx::f16;
using refx::detail::ThreefryWords;

namespace {

struct Kat {
  ThreefryWords counter, key, result;
};

TEST(Threefry2x32, Random123KnownAnswersAt20Rounds) {
  const Kat kats[] = {
      {{0x00000000u, 0x00000000u}, {0x00000000u, 0x00000000u}, {0x6b200159u, 0x99ba4efeu}},
      {{0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}, {0x1cb996fcu, 0xbb002be7u}},
      {{0x243f6a88u, 0x85a308d3u}, {0x13198a2eu, 0x03707344u}, {0xc4923a9cu, 0x483df7a0u}},
  };
  for (const Kat& k : kats) EXPECT_EQ(refx::detail::threefry2x32(k.key, k.counter), k.result);
  // The default is 20 rounds, and it is a constant expression.
  static_assert(refx::detail::threefry2x32({0u, 0u}, {0u, 0u}) == ThreefryWords{0x6b200159u, 0x99ba4efeu});
}

TEST(Threefry2x32, Random123KnownAnswersAt13Rounds) {
  const Kat kats[] = {
      {{0x00000000u, 0x00000000u}, {0x00000000u, 0x00000000u}, {0x9d1c5ec6u, 0x8bd50731u}},
      {{0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}, {0xfd36d048u, 0x2d17272cu}},
      {{0x243f6a88u, 0x85a308d3u}, {0x13198a2eu, 0x03707344u}, {0xba3e4725u, 0xf27d669eu}},
  };
  for (const Kat& k : kats) EXPECT_EQ(refx::detail::threefry2x32<13>(k.key, k.counter), k.result);
}

// jax.random.split(jax.random.key(0), 8), partitionable: the blocks of key
// (0, 0) at counters (0, 0) ... (0, 7).
const ThreefryWords kJaxSplitKey0[8] = {
    {1797259609u, 2579123966u}, {928981903u, 3453687069u},  {4146024105u, 2718843009u}, {2467461003u, 3840466878u},
    {2285895361u, 433833334u},  {1524306142u, 1887795613u}, {3792494674u, 2909014575u}, {2716826189u, 292468403u},
};

TEST(Threefry2x32, JaxSplitOfKeyZero) {
  for (std::uint32_t j = 0; j < 8; ++j) EXPECT_EQ(refx::detail::threefry2x32({0u, 0u}, {0u, j}), kJaxSplitKey0[j]) << j;
}

TEST(Threefry2x32, FoldInIsTheBlockAtCounterZeroData) {
  // jax.random.fold_in(key, d) hashes the counter (0, d): so folding 3 into
  // key (0, 0) is the fourth row of the split above.
  EXPECT_EQ(refx::detail::threefry_fold_in({0u, 0u}, 3u), kJaxSplitKey0[3]);
}

TEST(Threefry2x32, RandomBitsXorTheTwoWordsOfEachCounter) {
  std::vector<std::uint32_t> bits(8);
  refx::detail::threefry_random_bits({0u, 0u}, bits.data(), 8);
  for (std::size_t j = 0; j < 8; ++j) EXPECT_EQ(bits[j], kJaxSplitKey0[j][0] ^ kJaxSplitKey0[j][1]) << j;
}

// ---------------------------------------------------------------- stochastic rounding

/// The values of T at or below |x| and the next one up, found by a search
/// over T's bit patterns (positive patterns order like their values).
template <class T>
std::pair<double, double> neighbours(float x) {
  const double a = std::fabs(static_cast<double>(x));
  const std::uint16_t top = std::is_same_v<T, bf16> ? 0x7f80 : 0x7c00;  // infinity
  std::uint32_t lo = 0, hi = top;  // value(lo) <= a < value(hi), with a below T's infinity
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (static_cast<double>(static_cast<float>(T::from_bits(static_cast<std::uint16_t>(mid)))) <= a) lo = mid;
    else hi = mid;
  }
  const auto value = [](std::uint32_t b) {
    // The pattern above the largest finite one is infinity: as a step, 2^128 or 2^16.
    if (b == (std::is_same_v<T, bf16> ? 0x7f80u : 0x7c00u)) return std::is_same_v<T, bf16> ? 0x1p128 : 0x1p16;
    return static_cast<double>(static_cast<float>(T::from_bits(static_cast<std::uint16_t>(b))));
  };
  return {value(lo), value(lo + 1)};
}

/// Rounds x with the random bits k << (32 - B) | low for every k < 2^B;
/// checks that each result is one of x's neighbours and returns how many
/// times it was the upper one.
template <class T, class Round>
std::int64_t ups_over_every_top_bits(float x, int b, std::uint32_t low, Round round) {
  const auto [lo, hi] = neighbours<T>(x);
  std::int64_t ups = 0;
  for (std::uint32_t k = 0; k < (1u << b); ++k) {
    const T r = round(x, (k << (32 - b)) | low);
    const double got = std::fabs(static_cast<double>(static_cast<float>(r)));
    const double up = std::isinf(got) ? hi : got;
    EXPECT_TRUE(got == lo || up == hi) << x << " rounded to " << got << ", not " << lo << " or " << hi;
    if (up == hi && got != lo) ++ups;
    if (std::signbit(static_cast<float>(r)) != std::signbit(x)) ADD_FAILURE() << x << " changed sign";
  }
  return ups;
}

/// (|x| - lo) / (hi - lo) * 2^b, which the test's values make an integer.
template <class T>
std::int64_t expected_ups(float x, int b) {
  const auto [lo, hi] = neighbours<T>(x);
  const double want = std::ldexp((std::fabs(static_cast<double>(x)) - lo) / (hi - lo), b);
  EXPECT_EQ(want, std::floor(want)) << "the test's x = " << x << " needs more than " << b << " random bits";
  return static_cast<std::int64_t>(want);
}

std::vector<float> bf16_cases() {
  return {1.0f + 0x1p-9f,  // a quarter of a bf16 step above 1
          -(1.0f + 0x1p-9f),
          3.14159265f,
          -2.71828183f,
          1e-3f,
          -123456.789f,
          0x1.fffffep+127f,  // f32 max
          0x1p-130f,         // a subnormal of f32 and bf16
          0x1.234p-140f,
          0x1.7fp-126f,
          1.0f + 0x1p-8f - 0x1p-23f};
}

TEST(StochasticRound, Bf16RoundsUpAsOftenAsTheFractionOfTheStep) {
  for (float x : bf16_cases()) {
    const auto generic = [](float v, std::uint32_t r) { return refx::detail::stochastic_round_to<bf16>(v, r); };
    const auto bitwise = [](float v, std::uint32_t r) { return refx::detail::stochastic_round_bf16(v, r); };
    EXPECT_EQ(ups_over_every_top_bits<bf16>(x, 16, 0u, generic), expected_ups<bf16>(x, 16)) << x;
    EXPECT_EQ(ups_over_every_top_bits<bf16>(x, 16, 0xffffu, generic), expected_ups<bf16>(x, 16)) << x;
    EXPECT_EQ(ups_over_every_top_bits<bf16>(x, 16, 0x1234u, bitwise), expected_ups<bf16>(x, 16)) << x;
  }
}

TEST(StochasticRound, F16RoundsUpAsOftenAsTheFractionOfTheStep) {
  const std::vector<float> cases = {1.0f + 0x1p-12f, -(1.0f + 0x1p-12f), 3.14159265f, -1000.3f,
                                    65519.0f,    // between f16's max (65504) and 2^16: up is infinity
                                    0x1.8p-15f,  // f16 subnormals: a step of 2^-24
                                    -0x1.37p-20f,    0x1.0008p-14f,      0.1f};
  for (float x : cases) {
    const auto round = [](float v, std::uint32_t r) { return refx::detail::stochastic_round_to<f16>(v, r); };
    EXPECT_EQ(ups_over_every_top_bits<f16>(x, 16, 0u, round), expected_ups<f16>(x, 16)) << x;
    EXPECT_EQ(ups_over_every_top_bits<f16>(x, 16, 0xffffu, round), expected_ups<f16>(x, 16)) << x;
  }
}

TEST(StochasticRound, Bf16BitFormEqualsTheGenericRule) {
  // Every 2^-12th f32 bit pattern (denormals, normals, infinities, NaNs),
  // each with a few random words.
  const std::uint32_t randoms[] = {0u, 1u, 0x7fffu, 0x8000u, 0xffffu, 0x10000u, 0x80000000u, 0xdeadbeefu, 0xffffffffu};
  for (std::uint64_t u = 0; u <= 0xffffffffu; u += 0x1000u + 7u) {
    const float x = std::bit_cast<float>(static_cast<std::uint32_t>(u));
    for (std::uint32_t r : randoms) {
      const bf16 a = refx::detail::stochastic_round_bf16(x, r), b = refx::detail::stochastic_round_to<bf16>(x, r);
      ASSERT_EQ(a.bits(), b.bits()) << std::hex << "x bits " << u << " random " << r;
    }
  }
}

TEST(StochasticRound, ValuesTheTargetHoldsAreUnchanged) {
  const std::uint32_t randoms[] = {0u, 1u, 0x8000u, 0xffffu, 0x12345678u, 0x80000000u, 0xffffffffu};
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, 1.0f, -1.5f, 0.15625f, 65504.0f, -65504.0f, 0x1p-24f, 0x1p-14f, 3.0f * 0x1p-20f,
                  0x1.fep127f, 0x1p-133f, inf, -inf})
    for (std::uint32_t r : randoms) {
      if (std::isinf(x) || static_cast<float>(bf16(x)) == x) {
        EXPECT_EQ(refx::detail::stochastic_round_to<bf16>(x, r).bits(), bf16(x).bits()) << x;
        EXPECT_EQ(refx::detail::stochastic_round_bf16(x, r).bits(), bf16(x).bits()) << x;
      }
      if (std::isinf(x) || static_cast<float>(f16(x)) == x) {
        EXPECT_EQ(refx::detail::stochastic_round_to<f16>(x, r).bits(), f16(x).bits()) << x;
      }
    }
}

TEST(StochasticRound, NanStaysNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::uint32_t r : {0u, 0xffffffffu}) {
    EXPECT_TRUE(std::isnan(static_cast<float>(refx::detail::stochastic_round_to<bf16>(nan, r))));
    EXPECT_TRUE(std::isnan(static_cast<float>(refx::detail::stochastic_round_bf16(nan, r))));
    EXPECT_TRUE(std::isnan(static_cast<float>(refx::detail::stochastic_round_to<f16>(-nan, r))));
    // A NaN whose low bits would carry into the sign when added to.
    const float wide = std::bit_cast<float>(0x7fffffffu);
    EXPECT_TRUE(std::isnan(static_cast<float>(refx::detail::stochastic_round_bf16(wide, r))));
  }
}

TEST(StochasticRound, BeyondTheLargestFiniteValueRoundsToItOrInfinity) {
  // f16: 70000 is beyond 2^16, the step after 65504: always infinity.
  EXPECT_TRUE(std::isinf(static_cast<float>(refx::detail::stochastic_round_to<f16>(70000.0f, 0u))));
  EXPECT_EQ(static_cast<float>(refx::detail::stochastic_round_to<f16>(-65505.0f, 0u)), -65504.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(refx::detail::stochastic_round_to<f16>(-65505.0f, 0xffffffffu))));
  // bf16: f32's max lies 255/256 of the way from bf16's max to 2^128.
  const float fmax = std::numeric_limits<float>::max();
  EXPECT_EQ(refx::detail::stochastic_round_bf16(fmax, 0u).bits(), 0x7f7f);
  EXPECT_EQ(refx::detail::stochastic_round_bf16(fmax, 0xffffffffu).bits(), 0x7f80);
}

}  // namespace
