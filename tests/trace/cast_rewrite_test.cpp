// Values that rewrite to nothing. Casts (trace/detail/value_ops.hpp,
// detail::cast_rewrites_to): a cast to the value's own type, and a cast back
// through a wider type the value came from, trace no op; every bit pattern
// comes out as the unrewritten round trip would give it (a signaling NaN
// aside, which the round trip quiets); a narrowing round trip still runs. A
// multiply by ones (a literal, a broadcast or a full block; ones that widen
// the product leave the other factor's broadcast) and a select with a
// constant condition (detail::binary_rewrites_to, select) trace no op either,
// bit for bit what the op gives.

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <refx/refx.hpp>

namespace {
using namespace refx;

// The ops of primitive `p` the compiled program runs (its blocks list them:
// DCE drops a dead one).
std::size_t ops_in(const Graph& g, const Primitive& p) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < g.num_blocks(); ++b)
    for (const OpId o : g.block(static_cast<BlockId>(b)).ops) n += g.op(o).prim == &p;
  return n;
}
std::size_t casts_in(const Graph& g) { return ops_in(g, prim::cast); }
// How often primitive `name` is run, on its own or inside a fused chain
// (`fused[gt select store]`): its word in the printed graph, comments aside.
std::size_t runs_of(const Graph& g, const std::string& name) {
  std::istringstream text(fmt::format("{}", g));
  const std::regex word("\\b" + name + "\\b");
  std::size_t n = 0;
  for (std::string line; std::getline(text, line);) {
    line = line.substr(0, line.find("  #"));
    n += static_cast<std::size_t>(std::distance(std::sregex_iterator(line.begin(), line.end(), word), {}));
  }
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

// f32 patterns a multiply could get wrong: zeros of both signs, infinities,
// subnormals, the largest finite, a NaN with a payload.
std::vector<float> special_floats(std::size_t n) {
  const std::uint32_t bits[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x00000001u, 0x807fffffu,
                                0x7f7fffffu, 0x7fc01234u, 0xffc00001u, 0x3f800000u, 0xbf800001u, 0x00800000u};
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = i < std::size(bits) ? std::bit_cast<float>(bits[i]) : static_cast<float>(i) * -0.37f;
  return v;
}

TEST(MulRewrite, AMultiplyByOnesIsBitIdenticalAndRunsNothing) {
  constexpr std::int64_t r = 8, c = 128;
  const auto k = kernel([](VmemRef<const float, r, c> x, VmemRef<float, r, c> a, VmemRef<float, r, c> b,
                           VmemRef<float, r, c> d) {
                   const auto v = x.load();
                   a.store(v * 1.0f);
                   b.store(full<float, r, 1>(1.0f) * v);  // a column of ones, stretched
                   d.store(v * broadcast_to<r, c>(Scalar<float>(1.0f)));
                 }).compile(Mesh{{"x", 1}});
  EXPECT_EQ(runs_of(k.graph(), "mul"), 0u) << fmt::format("{}", k.graph());
  const std::vector<float> host = special_floats(r * c);
  const Array x = Array::generate<float>(1, Shape{r, c}, [&](int, std::int64_t i) { return host[std::size_t(i)]; });
  const auto out = k(x);
  for (std::size_t o = 0; o < 3; ++o) {
    const std::vector<float> y = out[o].to_host<float>(0);
    for (std::size_t i = 0; i < host.size(); ++i)  // what x * 1 gives on the host, bit for bit
      ASSERT_EQ(std::bit_cast<std::uint32_t>(y[i]), std::bit_cast<std::uint32_t>(host[i] * 1.0f)) << o << " " << i;
  }
}

TEST(MulRewrite, OnesThatWidenTheProductGiveTheBroadcastAndOtherFactorsMultiply) {
  const auto k = kernel([](VmemRef<const float, 8, 1> x, VmemRef<float, 8, 128> y, VmemRef<float, 8, 1> z) {
                   y.store(x.load() * full<float, 8, 128>(1.0f));  // x stretched to the product's shape
                   z.store(x.load() * 1.5f);
                 }).compile(Mesh{{"x", 1}});
  EXPECT_EQ(runs_of(k.graph(), "mul"), 1u) << fmt::format("{}", k.graph());  // the 1.5
  EXPECT_EQ(runs_of(k.graph(), "broadcast"), 1u) << fmt::format("{}", k.graph());
  const Array x = Array::generate<float>(1, Shape{8, 1}, [](int, std::int64_t i) { return float(i) + 0.5f; });
  const auto out = k(x);
  EXPECT_EQ(out[0].to_host<float>(0)[3 * 128 + 77], 3.5f);
  EXPECT_EQ(out[1].to_host<float>(0)[3], 3.5f * 1.5f);
}

TEST(SelectRewrite, AConstantConditionPicksItsAlternativeAndRunsNothing) {
  const auto k = kernel([](VmemRef<const float, 256> x, VmemRef<float, 256> a, VmemRef<float, 256> b,
                           VmemRef<float, 256> m) {
                   const auto v = x.load();
                   a.store(select(full<bool, 256>(true), v, v * 2.0f));
                   b.store(select(Scalar<bool>(false), -1.0f, v));
                   m.store(select(v > 0.0f, v, 0.0f));  // a mask from data: still a select
                 }).compile(Mesh{{"x", 1}});
  EXPECT_EQ(runs_of(k.graph(), "select"), 1u) << fmt::format("{}", k.graph());
  const std::vector<float> host = special_floats(256);
  const Array x = Array::generate<float>(1, Shape{256}, [&](int, std::int64_t i) { return host[std::size_t(i)]; });
  const auto out = k(x);
  const std::vector<float> a = out[0].to_host<float>(0), b = out[1].to_host<float>(0), m = out[2].to_host<float>(0);
  for (std::size_t i = 0; i < host.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(host[i])) << i;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(b[i]), std::bit_cast<std::uint32_t>(host[i])) << i;
  }
  EXPECT_EQ(m[20], 0.0f);  // 20 * -0.37 < 0
}

}  // namespace
