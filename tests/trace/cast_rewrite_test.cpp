// Values that rewrite to nothing. Casts (trace/detail/value_ops.hpp,
// detail::cast_rewrites_to): a cast to the value's own type, and a cast back
// through a wider type the value came from, trace no op; every bit pattern
// comes out as the unrewritten round trip would give it (a signaling NaN
// aside, which the round trip quiets); a narrowing round trip still runs. A
// multiply by ones (a literal, a broadcast or a full block; ones that widen
// the product leave the other factor's broadcast) and a select with a
// constant condition (detail::binary_rewrites_to, select) trace no op either,
// bit for bit what the op gives. A reshape of a load traced just before it
// (detail::reshape_rewrites_to) is a load of the reshaped view: one read of
// the Ref, in place where nothing writes it before the value's last use.

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <iterator>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <refx/ir/primitives/ref_ops.hpp>
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

// Pallas' `buf[...].reshape(m, n)` of a dense region: no reshape runs, the
// load reads the reshaped view (in place where nothing writes it before its
// last use), and every bit pattern comes out where row-major order puts it.
TEST(ReshapeRewrite, AReshapedLoadOfADenseRegionIsOneRead) {
  using i32 = std::int32_t;
  const auto k = kernel([](SmemRef<const i32, 1> at, VmemRef<const float, 2, 4, 8, 16> x, VmemRef<const float, 8, 32> q,
                           VmemRef<float, 32, 16> y, VmemRef<float, 8, 16> z) {
                   y.store(reshape<32, 16>(x.at(at[0]).load()));  // a traced index: still one dense run
                   z.store(dot(q.load(), reshape<32, 16>(x.at(at[0]).load())));
                 }).compile(Mesh{{"x", 1}});
  EXPECT_EQ(ops_in(k.graph(), prim::reshape), 0u) << fmt::format("{}", k.graph());
  std::size_t in_place = 0;
  for (std::size_t o = 0; o < k.graph().num_ops(); ++o) in_place += prim::load_reads_in_place(k.graph(), k.graph().op(OpId(o)));
  EXPECT_GE(in_place, 1u) << fmt::format("{}", k.graph());  // the dot's operand borrows the Ref
  const std::vector<float> host = special_floats(2 * 4 * 8 * 16);
  const Array x = Array::generate<float>(1, Shape{2, 4, 8, 16}, [&](int, std::int64_t i) { return host[std::size_t(i)]; });
  const Array q = Array::generate<float>(1, Shape{8, 32}, [](int, std::int64_t i) { return float(i % 3); });
  const Array one = Array::from_shards<i32>({{1}}, Shape{1});
  const auto out = k(one, x, q);
  const std::vector<float> y = out[0].to_host<float>(0), z = out[1].to_host<float>(0);
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(y[i]), std::bit_cast<std::uint32_t>(host[512 + i])) << i;
  // The dot over the borrowed region gives what it gives over a copy: the unrewritten kernel's.
  const auto copied = kernel([](VmemRef<const float, 32, 16> x, VmemRef<const float, 8, 32> q, VmemRef<float, 8, 16> z) {
                        z.store(dot(q.load(), x.load()));
                      }).compile(Mesh{{"x", 1}});
  const Array rows = Array::generate<float>(1, Shape{32, 16}, [&](int, std::int64_t i) { return host[512 + std::size_t(i)]; });
  const std::vector<float> want = copied(rows, q)[0].to_host<float>(0);
  for (std::size_t i = 0; i < z.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(z[i]), std::bit_cast<std::uint32_t>(want[i])) << i;
}

// A reshape to the value's own extents is the value; a reshape of a reshape
// is one reshape of the first's operand (none when that has the extents):
// flash attention's `tile<1, 1>(m)` and `l_broadcast` ran two 64 KiB copies.
TEST(ReshapeRewrite, AReshapeChainIsAtMostOneReshape) {
  const auto k = kernel([](VmemRef<const float, 8, 16> x, VmemRef<float, 8, 16> a, VmemRef<float, 128> b,
                           VmemRef<float, 8, 16> c) {
                   const auto v = x.load() * 2.0f;  // not a load: no load of a reshaped view
                   a.store(tile<1, 1>(v) + reshape<8, 16>(v));
                   b.store(reshape<128>(reshape<16, 8>(reshape<8, 1, 16>(v))));
                   c.store(reshape<8, 16>(reshape<4, 32>(v)));
                 }).compile(Mesh{{"x", 1}});
  EXPECT_EQ(ops_in(k.graph(), prim::reshape), 1u) << fmt::format("{}", k.graph());  // b's, from v
  const std::vector<float> host = special_floats(128);
  const Array x = Array::generate<float>(1, Shape{8, 16}, [&](int, std::int64_t i) { return host[std::size_t(i)]; });
  const auto out = k(x);
  const std::vector<float> a = out[0].to_host<float>(0), b = out[1].to_host<float>(0), c = out[2].to_host<float>(0);
  for (std::size_t i = 0; i < host.size(); ++i) {
    const float twice = host[i] * 2.0f;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(twice + twice)) << i;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(b[i]), std::bit_cast<std::uint32_t>(twice)) << i;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(c[i]), std::bit_cast<std::uint32_t>(twice)) << i;
  }
}

// A rewritten reshape still names a Value used outside its body, on the
// reshape's line, although it runs nothing.
TEST(ReshapeRewrite, AValueOutsideItsBodyIsStillNamed) {
  const auto escaped = [] {
    (void)trace([](VmemRef<const float, 8, 16> x) {
      std::optional<Value<float, extents<8, 16>>> inner;
      fori_loop(0, 2, [&](Scalar<std::int32_t>) { inner = x.load() * 2.0f; });
      (void)reshape<8, 16>(*inner);  // to its own extents: no op
    });
  };
  try {
    escaped();
    FAIL() << "no TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("used outside that body"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cast_rewrite_test.cpp"), std::string::npos) << e.what();
  }
}

// Where the rewrite would change what is read, or the region is not one run,
// the reshape stays: a store into the Ref after the load (the value is the
// old contents), a window of an inner dimension, and a load not traced last.
TEST(ReshapeRewrite, ALaterWriteOrAStridedRegionKeepsTheReshape) {
  const auto k = kernel([](VmemRef<const float, 4, 16> x, VmemRef<float, 4, 16> r, VmemRef<float, 64> y,
                           VmemRef<float, 32> w, VmemRef<float, 64> v) {
                   r.store(x.load());
                   const auto old = r.load();
                   r.store(zeros<float, 4, 16>());
                   y.store(reshape<64>(old));
                   w.store(reshape<32>(x.at(all, ds(0, 8)).load()));
                   const auto first = x.load();
                   const auto second = r.load();
                   const auto rf = reshape<64>(first);  // second's load was traced last
                   const auto rs = reshape<64>(second);  // and now rf's reshape
                   v.store(rf + rs);
                 }).compile(Mesh{{"x", 1}});
  EXPECT_EQ(ops_in(k.graph(), prim::reshape), 4u) << fmt::format("{}", k.graph());
  const Array x = Array::generate<float>(1, Shape{4, 16}, [](int, std::int64_t i) { return float(i) + 0.25f; });
  const auto out = k(x);
  const std::vector<float> y = out[1].to_host<float>(0), w = out[2].to_host<float>(0), v = out[3].to_host<float>(0);
  for (std::int64_t i = 0; i < 64; ++i) {
    ASSERT_EQ(y[std::size_t(i)], float(i) + 0.25f) << i;
    ASSERT_EQ(v[std::size_t(i)], float(i) + 0.25f) << i;
  }
  for (std::int64_t i = 0; i < 32; ++i) ASSERT_EQ(w[std::size_t(i)], float(i / 8 * 16 + i % 8) + 0.25f) << i;
}

}  // namespace
