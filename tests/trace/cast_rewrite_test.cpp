// Casts that rewrite to nothing (trace/detail/value_ops.hpp,
// detail::cast_rewrites_to): a cast to the value's own type, and a cast back
// through a wider type the value came from, trace no op; every bit pattern
// comes out as the unrewritten round trip would give it (a signaling NaN
// aside, which the round trip quiets); a narrowing round trip still runs.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <refx/refx.hpp>

namespace {
using namespace refx;

// The casts the compiled program runs (the ops its blocks list: DCE drops a dead one from them).
std::size_t casts_in(const Graph& g) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < g.num_blocks(); ++b)
    for (const OpId o : g.block(static_cast<BlockId>(b)).ops) n += g.op(o).prim == &prim::cast;
  return n;
}

template <class H>
H from_bits(std::uint16_t b) {
  return H::from_bits(b);
}
template <class H>
std::uint16_t bits_of(H h) {
  return h.bits();
}

// Every 16-bit pattern of H through f32 and back: no cast runs, and each
// pattern equals what the two conversions give on the host (the unrewritten
// graph's arithmetic), signaling NaNs aside.
template <class H>
void every_pattern_round_trips(std::uint16_t quiet_bit, std::uint16_t exponent) {
  constexpr std::int64_t n = 1 << 16;
  const auto k = kernel([](VmemRef<const H, n> x, VmemRef<H, n> y) { y.store(cast<H>(cast<float>(x.load()))); })
                     .compile(Mesh{{"x", 1}});
  EXPECT_EQ(casts_in(k.graph()), 0u) << fmt::format("{}", k.graph());
  const Array x = Array::generate<H>(1, Shape{n}, [](int, std::int64_t i) {
    return from_bits<H>(static_cast<std::uint16_t>(i));
  });
  const std::vector<H> y = k(x)[0].template to_host<H>(0);
  std::int64_t checked = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto b = static_cast<std::uint16_t>(i);
    const bool nan = (b & exponent) == exponent && (b & (exponent ^ 0x7fffu) & 0x7fffu) != 0;
    const std::uint16_t host = bits_of(H(static_cast<float>(from_bits<H>(b))));
    if (nan && (b & quiet_bit) == 0) {
      EXPECT_EQ(host, b | quiet_bit);  // the unrewritten round trip quiets it; the rewrite keeps it
      continue;
    }
    ++checked;
    ASSERT_EQ(host, b) << std::hex << b;
    ASSERT_EQ(bits_of(y[static_cast<std::size_t>(i)]), b) << std::hex << b;
  }
  EXPECT_GT(checked, 64000);  // all but the signaling NaNs (127 x 2 of bf16, 511 x 2 of f16)
}

TEST(CastRewrite, Bf16ThroughF32IsBitIdenticalAndRunsNothing) { every_pattern_round_trips<bf16>(0x0040, 0x7f80); }
TEST(CastRewrite, F16ThroughF32IsBitIdenticalAndRunsNothing) { every_pattern_round_trips<f16>(0x0200, 0x7c00); }

TEST(CastRewrite, ACastToTheValuesOwnTypeIsNoOp) {
  const auto k = kernel([](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y) {
                   y.store(cast<float>(x.load()) * 2.0f);
                 }).compile(Mesh{{"x", 1}});
  EXPECT_EQ(casts_in(k.graph()), 0u);
  const Array x = Array::generate<float>(1, Shape{8, 128}, [](int, std::int64_t i) { return float(i) - 7.5f; });
  const std::vector<float> y = k(x)[0].to_host<float>(0);
  for (std::int64_t i = 0; i < 8 * 128; ++i) EXPECT_EQ(y[static_cast<std::size_t>(i)], 2 * (float(i) - 7.5f));
}

TEST(CastRewrite, IntegersThroughAWiderIntegerAreThemselves) {
  const auto k = kernel([](VmemRef<const std::int8_t, 256> x, VmemRef<std::int8_t, 256> y) {
                   y.store(cast<std::int8_t>(cast<std::int32_t>(x.load())));
                 }).compile(Mesh{{"x", 1}});
  EXPECT_EQ(casts_in(k.graph()), 0u);
  const Array x = Array::generate<std::int8_t>(1, Shape{256}, [](int, std::int64_t i) {
    return static_cast<std::int8_t>(i - 128);
  });
  const std::vector<std::int8_t> y = k(x)[0].to_host<std::int8_t>(0);
  for (std::int64_t i = 0; i < 256; ++i) EXPECT_EQ(y[static_cast<std::size_t>(i)], static_cast<std::int8_t>(i - 128));
}

// Narrowing first loses bits: f32 -> bf16 -> f32 rounds, and both casts run.
TEST(CastRewrite, ANarrowingRoundTripStillRuns) {
  const auto k = kernel([](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y) {
                   y.store(cast<float>(cast<bf16>(x.load())));
                 }).compile(Mesh{{"x", 1}});
  EXPECT_EQ(casts_in(k.graph()), 2u);
  const Array x = Array::generate<float>(1, Shape{8, 128}, [](int, std::int64_t i) { return 1.0f + float(i) / 4096; });
  const std::vector<float> y = k(x)[0].to_host<float>(0);
  EXPECT_EQ(y[1], static_cast<float>(bf16(1.0f + 1.0f / 4096)));
  EXPECT_NE(y[1], 1.0f + 1.0f / 4096);
  // A widened value used elsewhere keeps its cast; only the round trip's second half goes.
  const auto both = kernel([](VmemRef<const bf16, 8, 128> x, VmemRef<bf16, 8, 128> y, VmemRef<float, 8, 128> z) {
                      const auto wide = cast<float>(x.load());
                      z.store(wide);
                      y.store(cast<bf16>(wide));
                    }).compile(Mesh{{"x", 1}});
  EXPECT_EQ(casts_in(both.graph()), 1u);
}

}  // namespace
