// prng_seed, prng_random_bits and stochastic_round (trace/random.hpp) as a
// kernel sees them, run by the reference interpreter on one device: the bits
// follow the documented key and counter formation (computed here on the
// host from the Threefry function that tests/ir/random_test.cpp checks
// against published answers), calls and loop iterations draw fresh bits,
// the bits look uniform, stochastic rounding averages to x, and the misuses
// the tracer sees are errors naming the line. tests/backends/random_bits_test.cpp
// runs the same on N devices, the interpreter against the threaded runtime.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <refx/ir/detail/threefry.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/refx.hpp>

#include "support/testing.hpp"

using namespace refx;
using refx::detail::ThreefryWords;
using refx::testing::contents;
using refx::testing::throws_with;

namespace {

using U32 = std::uint32_t;

// ---------------------------------------------------------------- the documented formation, on the host

/// The key prng_seed(seeds...) makes on `device` (core 0): (0, seed0), the
/// other seeds folded in, then the device, then the core.
ThreefryWords device_key(std::vector<U32> seeds, U32 device) {
  ThreefryWords k{0u, seeds[0]};
  for (std::size_t i = 1; i < seeds.size(); ++i) k = detail::threefry_fold_in(k, seeds[i]);
  return detail::threefry_fold_in(detail::threefry_fold_in(k, device), 0u);
}
/// Call `call`'s bits, in the loops (entered after the seed) at `indices`.
std::vector<U32> host_bits(ThreefryWords key, U32 call, std::vector<U32> indices, std::int64_t n) {
  key = detail::threefry_fold_in(key, call);
  for (U32 i : indices) key = detail::threefry_fold_in(key, i);
  std::vector<U32> out;
  for (std::int64_t i = 0; i < n; ++i) {
    const ThreefryWords b = detail::threefry2x32(key, {0u, static_cast<U32>(i)});
    out.push_back(b[0] ^ b[1]);
  }
  return out;
}

std::vector<U32> row(const std::vector<U32>& all, std::int64_t r, std::int64_t width) {
  return {all.begin() + r * width, all.begin() + (r + 1) * width};
}

// ---------------------------------------------------------------- bits

TEST(RandomBits, FollowTheDocumentedKeyAndCounter) {
  constexpr std::int64_t W = 64;
  Graph g = trace([](VmemRef<U32, W> a, VmemRef<U32, 2, W> b, VmemRef<U32, 3, W> rows) {
    prng_seed(1234);
    a.store(prng_random_bits<W>());                // call 0
    b.store(prng_random_bits<2, W>());             // call 1: a rank-2 shape counts in row-major order
    fori_loop(0, 3, [&](Scalar<std::int32_t> i) {  // call 2, with each iteration's index
      rows.at(i, all).store(prng_random_bits<W>());
    });
  });
  Buffer a(DType::u32, Shape{W}), b(DType::u32, Shape{2, W}), rows(DType::u32, Shape{3, W});
  interpret(g, a, b, rows);
  const ThreefryWords key = device_key({1234u}, 0u);
  EXPECT_EQ(contents<U32>(a), host_bits(key, 0, {}, W));
  EXPECT_EQ(contents<U32>(b), host_bits(key, 1, {}, 2 * W));
  for (U32 i = 0; i < 3; ++i) EXPECT_EQ(row(contents<U32>(rows), i, W), host_bits(key, 2, {i}, W)) << "iteration " << i;
}

TEST(RandomBits, SeveralTracedSeedsAndNestedLoops) {
  constexpr std::int64_t W = 16;
  Graph g = trace([](VmemRef<const std::int32_t> seed, VmemRef<U32, 2, 3, W> out) {
    prng_seed(seed.load(), -5);
    fori_loop(0, 2, [&](Scalar<std::int32_t> i) {
      fori_loop(0, 3, [&](Scalar<std::int32_t> j) { out.at(i, j, all).store(prng_random_bits<W>()); });
    });
  });
  Buffer seed = refx::testing::make_buffer<std::int32_t>(Shape{}, {77}), out(DType::u32, Shape{2, 3, W});
  interpret(g, seed, out);
  const ThreefryWords key = device_key({77u, static_cast<U32>(-5)}, 0u);
  const auto got = contents<U32>(out);
  for (U32 i = 0; i < 2; ++i)
    for (U32 j = 0; j < 3; ++j) EXPECT_EQ(row(got, i * 3 + j, W), host_bits(key, 0, {i, j}, W)) << i << "," << j;
}

TEST(RandomBits, SameSeedSameBitsOnEveryRunAndEveryTrace) {
  const auto run = [] {
    Graph g = trace([](VmemRef<U32, 128> out) {
      prng_seed(99);
      out.store(prng_random_bits<128>());
    });
    Buffer out(DType::u32, Shape{128});
    interpret(g, out);
    interpret(g, out);  // and again on the same graph
    return contents<U32>(out);
  };
  const auto first = run();
  EXPECT_EQ(run(), first);
  EXPECT_EQ(std::set<U32>(first.begin(), first.end()).size(), first.size()) << "128 words, no repeats expected";
}

// Pallas' stateful samplers: in range, with the distribution's moments
// (1024 draws each, deterministic for the seed, so the bounds cannot flake).
TEST(RandomBits, StatefulSamplers) {
  constexpr std::int64_t N = 8, W = 128;
  Graph g = trace([](VmemRef<float, N, W> u, VmemRef<float, N, W> z, VmemRef<bool, N, W> b) {
    prng_seed(2026);
    u.store(stateful_uniform<N, W>(2.0f, 5.0f));
    z.store(stateful_normal<N, W>());
    b.store(stateful_bernoulli<N, W>(0.25f));
  });
  Buffer bu(DType::f32, Shape{N, W}), bz(DType::f32, Shape{N, W}), bb(DType::pred, Shape{N, W});
  interpret(g, bu, bz, bb);
  const auto us = contents<float>(bu), zs = contents<float>(bz);
  const auto bs = contents<bool>(bb);
  double su = 0, sz = 0, szz = 0, sb = 0;
  for (std::size_t i = 0; i < us.size(); ++i) {
    ASSERT_GE(us[i], 2.0f);
    ASSERT_LT(us[i], 5.0f);
    ASSERT_TRUE(std::isfinite(zs[i]));
    su += us[i];
    sz += zs[i];
    szz += double(zs[i]) * zs[i];
    sb += bs[i] ? 1 : 0;
  }
  const double n = static_cast<double>(us.size());
  EXPECT_NEAR(su / n, 3.5, 0.1);
  EXPECT_NEAR(sz / n, 0.0, 0.12);
  EXPECT_NEAR(szz / n - (sz / n) * (sz / n), 1.0, 0.15);
  EXPECT_NEAR(sb / n, 0.25, 0.05);
}

TEST(RandomBits, EveryCallAndIterationIsFreshAndReseedingRepeats) {
  constexpr std::int64_t W = 32;
  Graph g = trace([](VmemRef<U32, 6, W> out) {
    prng_seed(5);
    out.at(0, all).store(prng_random_bits<W>());
    out.at(1, all).store(prng_random_bits<W>());
    fori_loop(0, 2, [&](Scalar<std::int32_t> i) { out.at(i + 2, all).store(prng_random_bits<W>()); });
    prng_seed(5);  // as on a TPU: the same seed starts the same sequence again
    out.at(4, all).store(prng_random_bits<W>());
    prng_seed(6);
    out.at(5, all).store(prng_random_bits<W>());
  });
  Buffer out(DType::u32, Shape{6, W});
  interpret(g, out);
  const auto got = contents<U32>(out);
  for (std::int64_t r = 0; r < 4; ++r)
    for (std::int64_t s = r + 1; s < 6; ++s)
      if (!(r == 0 && s == 4)) {
        EXPECT_NE(row(got, r, W), row(got, s, W)) << "rows " << r << " and " << s;
      }
  EXPECT_EQ(row(got, 4, W), row(got, 0, W));
}

TEST(RandomBits, ALoopAroundTheSeedSeedsEachIterationAgain) {
  constexpr std::int64_t W = 32;
  Graph g = trace([](VmemRef<U32, 3, W> same, VmemRef<U32, 3, W> folded) {
    fori_loop(0, 3, [&](Scalar<std::int32_t> i) {
      prng_seed(11);
      same.at(i, all).store(prng_random_bits<W>());
      prng_seed(11, i);  // the usual way to draw per iteration with a seed inside the loop
      folded.at(i, all).store(prng_random_bits<W>());
    });
  });
  Buffer same(DType::u32, Shape{3, W}), folded(DType::u32, Shape{3, W});
  interpret(g, same, folded);
  const auto s = contents<U32>(same), f = contents<U32>(folded);
  EXPECT_EQ(row(s, 1, W), row(s, 0, W));
  EXPECT_EQ(row(s, 2, W), row(s, 0, W));
  for (U32 i = 0; i < 3; ++i) EXPECT_EQ(row(f, i, W), host_bits(device_key({11u, i}, 0u), 0, {}, W));
}

TEST(RandomBits, LookUniform) {
  // 65536 words from a fixed seed. Chi-square over 256 buckets of the top
  // and of the bottom byte (255 degrees of freedom: mean 255, sd 22.6), and
  // the count of ones of every bit (sd 128). The bounds are 6 sd from the
  // mean: an honest generator passes with overwhelming probability, and the
  // seed is fixed, so the test gives the same answer every time.
  constexpr std::int64_t R = 256, C = 256, N = R * C;
  Graph g = trace([](VmemRef<U32, R, C> out) {
    prng_seed(2024);
    out.store(prng_random_bits<R, C>());
  });
  Buffer out(DType::u32, Shape{R, C});
  interpret(g, out);
  const auto bits = contents<U32>(out);
  for (int shift : {24, 0}) {
    std::vector<double> count(256, 0.0);
    for (U32 w : bits) count[(w >> shift) & 0xffu] += 1.0;
    double chi2 = 0;
    const double expected = static_cast<double>(N) / 256.0;
    for (double c : count) chi2 += (c - expected) * (c - expected) / expected;
    EXPECT_LT(chi2, 255.0 + 6.0 * std::sqrt(2.0 * 255.0)) << "byte at bit " << shift;
    EXPECT_GT(chi2, 255.0 - 6.0 * std::sqrt(2.0 * 255.0)) << "byte at bit " << shift << ": too even to be random";
  }
  for (int b = 0; b < 32; ++b) {
    std::int64_t ones = 0;
    for (U32 w : bits) ones += (w >> b) & 1u;
    EXPECT_NEAR(static_cast<double>(ones), N / 2.0, 6.0 * std::sqrt(N / 4.0)) << "bit " << b;
  }
}

// ---------------------------------------------------------------- stochastic rounding

/// Rounds row r's value x[r] (repeated over the C columns) to T with fresh
/// random bits, and checks that each row's mean is x[r] within 6 standard
/// deviations of a mean of C roundings (each is lo or hi = lo + step, up
/// with probability p: sd = step sqrt(p (1 - p) / C)). The seed is fixed.
template <class T>
void mean_converges(const std::vector<float>& xs) {
  constexpr std::int64_t R = 8, C = 8192;
  ASSERT_EQ(static_cast<std::int64_t>(xs.size()), R);
  Graph g = trace([](VmemRef<const float, R, C> x, VmemRef<T, R, C> y) {
    prng_seed(31337);
    y.store(stochastic_round<T>(x.load(), prng_random_bits<R, C>()));
  });
  std::vector<float> xin;
  for (float v : xs) xin.insert(xin.end(), C, v);
  Buffer x = refx::testing::make_buffer<float>(Shape{R, C}, xin), y(dtype_v<T>, Shape{R, C});
  interpret(g, x, y);
  const auto got = contents<T>(y);
  for (std::int64_t r = 0; r < R; ++r) {
    const float v = xs[static_cast<std::size_t>(r)];
    double sum = 0, below = std::numeric_limits<double>::infinity(), above = -below;
    for (std::int64_t c = 0; c < C; ++c) {
      const double e = static_cast<float>(got[static_cast<std::size_t>(r * C + c)]);
      sum += e;
      below = std::min(below, e);
      above = std::max(above, e);
    }
    const double mean = sum / C;
    ASSERT_LE(below, v);
    ASSERT_GE(above, v);
    const double step = above - below;  // both neighbours occur for these x
    ASSERT_GT(step, 0.0) << "row " << r << ": every rounding went one way";
    const double p = (v - below) / step;
    EXPECT_NEAR(mean, v, 6.0 * step * std::sqrt(p * (1 - p) / C)) << "row " << r << " x = " << v;
  }
}

TEST(StochasticRoundKernel, Bf16MeanConvergesToX) {
  mean_converges<bf16>({1.0f + 0x1p-10f, 3.14159265f, -2.71828183f, 0.1f, -1e-3f, 12345.678f, 0x1.0101p-130f,
                        1.0f + 0x1p-8f - 0x1p-16f});
}

TEST(StochasticRoundKernel, F16MeanConvergesToX) {
  mean_converges<f16>(
      {1.0f + 0x1p-13f, 3.14159265f, -2.71828183f, 0.1f, -1e-3f, 1234.567f, 0x1.37p-20f, 65519.0f - 16.5f});
}

TEST(StochasticRoundKernel, RepresentableValuesAreUnchanged) {
  constexpr std::int64_t N = 512;
  Graph g = trace([](VmemRef<const float, N> x, VmemRef<bf16, N> y, VmemRef<f16, N> z) {
    prng_seed(1);
    y.store(stochastic_round<bf16>(x.load(), prng_random_bits<N>()));
    z.store(stochastic_round<f16>(x.load(), prng_random_bits<N>()));
  });
  // Every value here is a bf16 and an f16: integers of at most 8 bits times 2^-4.
  Buffer x = refx::testing::make_buffer_fn<float>(Shape{N},
                                                  [](std::int64_t i) { return static_cast<float>(i - 256) / 16.0f; });
  Buffer y(DType::bf16, Shape{N}), z(DType::f16, Shape{N});
  interpret(g, x, y, z);
  const auto xs = contents<float>(x);
  const auto ys = contents<bf16>(y);
  const auto zs = contents<f16>(z);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(static_cast<float>(ys[i]), xs[i]) << i;
    ASSERT_EQ(static_cast<float>(zs[i]), xs[i]) << i;
  }
}

// ---------------------------------------------------------------- the graph and misuse

TEST(RandomBits, PrintLikeOtherOps) {
  Graph g = trace([](VmemRef<const float, 8> x, VmemRef<bf16, 8> y) {
    prng_seed(3);
    fori_loop(0, 2, [&](Scalar<std::int32_t>) { y.store(stochastic_round<bf16>(x.load(), prng_random_bits<8>())); });
  });
  const std::string text = to_text(g);
  EXPECT_NE(text.find(":u32[2] = prng_seed "), std::string::npos) << text;
  EXPECT_NE(text.find(":u32[8] = prng_random_bits[call=0] "), std::string::npos) << text;
  EXPECT_NE(text.find("= stochastic_round[bf16] "), std::string::npos) << text;
  EXPECT_NE(to_dot(g).find("prng_random_bits"), std::string::npos);
}

// ---------------------------------------------------------------- sample_block

/// Tile t's bits in sample_block: the sampler's first call after the key
/// (0, seed) with t folded in, as jax's fold_in(key(seed), t); no device.
std::vector<U32> tile_bits(U32 seed, U32 t, std::int64_t n) { return host_bits(detail::threefry_fold_in({0u, seed}, t), 0, {}, n); }

TEST(SampleBlock, TheSameNumbersWhateverTheBlockShapeAndIndex) {
  constexpr std::int64_t M = 32, N = 256, TM = 8, TN = 128;
  const auto sampler = [] { return stateful_bits<TM, TN>(); };
  Graph g = trace([&](VmemRef<U32, M, N> small, VmemRef<U32, M, N> whole, VmemRef<U32, M, N> rows) {
    for (std::int64_t i = 0; i < 2; ++i)  // 16 x 128 blocks at integer indices
      for (std::int64_t j = 0; j < 2; ++j)
        small.at(ds<16>(i * 16), ds<128>(j * 128))
            .store(sample_block<extents<16, 128>, extents<TM, TN>>(sampler, 7, Shape{M, N}, i, j));
    whole.store(sample_block<extents<M, N>, extents<TM, TN>>(sampler, 7, Shape{M, N}, 0, 0));
    fori_loop(0, 4, [&](Scalar<std::int32_t> i) {  // 8 x 256 blocks at a traced index
      rows.at(ds<8>(i * 8), all).store(sample_block<extents<8, N>, extents<TM, TN>>(sampler, 7, Shape{M, N}, i, 0));
    });
  });
  Buffer small(DType::u32, Shape{M, N}), whole(DType::u32, Shape{M, N}), rows(DType::u32, Shape{M, N});
  interpret(g, small, whole, rows);
  std::vector<U32> want(static_cast<std::size_t>(M * N));
  for (std::int64_t ti = 0; ti < M / TM; ++ti)
    for (std::int64_t tj = 0; tj < N / TN; ++tj) {
      const auto bits = tile_bits(7, static_cast<U32>(ti * (N / TN) + tj), TM * TN);
      for (std::int64_t r = 0; r < TM; ++r)
        for (std::int64_t c = 0; c < TN; ++c)
          want[static_cast<std::size_t>((ti * TM + r) * N + tj * TN + c)] = bits[static_cast<std::size_t>(r * TN + c)];
    }
  EXPECT_EQ(contents<U32>(small), want);
  EXPECT_EQ(contents<U32>(whole), want);
  EXPECT_EQ(contents<U32>(rows), want);
}

TEST(SampleBlock, LeavesTheKernelsGeneratorAsItWas) {
  constexpr std::int64_t W = 16;
  Graph g = trace([](VmemRef<U32, 2, W> out, VmemRef<float, 8, W> noise) {
    prng_seed(3);
    out.at(0, all).store(prng_random_bits<W>());
    noise.store(sample_block<extents<8, W>, extents<4, W>>([] { return stateful_uniform<4, W>(); }, 9, Shape{8, W}, 0, 0));
    out.at(1, all).store(prng_random_bits<W>());
  });
  Buffer out(DType::u32, Shape{2, W}), noise(DType::f32, Shape{8, W});
  interpret(g, out, noise);
  const auto got = contents<U32>(out);
  EXPECT_EQ(row(got, 0, W), host_bits(device_key({3}, 0), 0, {}, W));
  EXPECT_EQ(row(got, 1, W), host_bits(device_key({3}, 0), 1, {}, W));  // the next call, not a reseed
  for (float u : contents<float>(noise)) {
    EXPECT_GE(u, 0.0f);
    EXPECT_LT(u, 1.0f);
  }
}

TEST(SampleBlock, ATotalShapeOfAnotherRankIsATraceErrorNamingTheLine) {
  int line = 0;
  const auto f = [&] {
    trace([&](VmemRef<U32, 8, 8> out) {
      line = __LINE__; out.store(sample_block<extents<8, 8>, extents<8, 8>>([] { return stateful_bits<8, 8>(); }, 1, Shape{64}, 0, 0));
    });
  };
  EXPECT_TRUE(throws_with<TraceError>(f, {"refx: sample_block's total shape [64] has rank 1; the block has rank 2"}));
  EXPECT_TRUE(throws_with<TraceError>(f, {refx::testing::at_line("random_test.cpp", line) + ")"}));
}

TEST(RandomBits, WithoutASeedIsATraceErrorNamingTheLine) {
  int line = 0;
  const auto f = [&] {
    trace([&](VmemRef<U32, 8> out) {
      line = __LINE__; out.store(prng_random_bits<8>());
    });
  };
  EXPECT_TRUE(throws_with<TraceError>(f, {"prng_random_bits without a prng_seed before it", "call refx::prng_seed"}));
  EXPECT_TRUE(throws_with<TraceError>(f, {refx::testing::at_line("random_test.cpp", line) + ")"}));
}

TEST(RandomBits, AfterTheBodyThatSeededIsATraceError) {
  int line = 0, seeded = 0;
  const auto f = [&] {
    trace([&](VmemRef<U32, 8> out) {
      fori_loop(0, 2, [&](Scalar<std::int32_t> i) {
        seeded = __LINE__; prng_seed(i);
      });
      line = __LINE__; out.store(prng_random_bits<8>());
    });
  };
  const auto t = refx::testing::thrown<TraceError>(f);
  EXPECT_TRUE(refx::testing::has_all(t, [&] {
    return std::vector<std::string>{
        "prng_random_bits after the fori_loop, when or scope body holding the latest prng_seed (at ",
        refx::testing::at_line("random_test.cpp", seeded) + ")", refx::testing::at_line("random_test.cpp", line) + ")",
        "call prng_seed again after that body, or before it"};
  }));
}

TEST(RandomBits, AStochasticRoundOfAnotherShapeIsATraceError) {
  // Static extents catch a mismatch when compiling; dynamic ones when tracing.
  const auto f = [] {
    trace(
        [](Ref<const float, extents<dyn>> x, Ref<bf16, extents<dyn>> y) {
          prng_seed(1);
          y.store(stochastic_round<bf16>(x.load(), prng_random_bits<8>()));
        },
        {Shape{16}, Shape{16}});
  };
  EXPECT_TRUE(throws_with<TraceError>(f, {"stochastic_round: takes u32 random bits of the value's shape [16]"}));
}

}  // namespace
