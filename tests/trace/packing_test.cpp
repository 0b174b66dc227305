// pltpu.pack_elementwise / unpack_elementwise (docs/pallas-to-refx.md): the
// words are checked bit for bit against the host's packing (bf16 rounding of
// refx::bf16, low bits of integers), over values that round, subnormals,
// infinities, NaN and negative integers; unpacking gives back the bf16 as
// f32 and the integers sign- or zero-extended, as Pallas' docstring says. An
// index out of range is refused on the user's line.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include <refx/refx.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kN = 256;
int g_line = 0;

float f32_input(int k, std::int64_t i) {
  const float specials[] = {0.0f,     -0.0f, 1.0f, 1.00390625f /* rounds */, 1.01171875f, -3.5f, 1e-40f /* subnormal */,
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            65504.0f, 3.0e38f};
  if (i < 11) return specials[(i + k) % 11];
  return static_cast<float>(i * (k + 1)) * 0.37f - 40.0f;
}
std::int32_t int_input(int k, std::int64_t i) { return static_cast<std::int32_t>((i * 37 + k * 1001) % 700) - 350; }

TEST(Packing, Bf16PairsAreTheHostsRoundingInTheRightHalves) {
  auto exe = kernel([](VmemRef<const float, kN> a, VmemRef<const float, kN> b, VmemRef<std::uint32_t, kN> w,
                       VmemRef<float, kN> lo, VmemRef<float, kN> hi) {
               const auto word = pack_elementwise<bf16>({a.load(), b.load()});
               w.store(word);
               lo.store(unpack_elementwise<bf16, float>(word, 0));
               hi.store(unpack_elementwise<bf16, float>(word, 1));
             }).compile(Mesh{{"x", 1}});
  const Array a = Array::generate<float>(1, Shape{kN}, [](int, std::int64_t i) { return f32_input(0, i); });
  const Array b = Array::generate<float>(1, Shape{kN}, [](int, std::int64_t i) { return f32_input(1, i); });
  const std::vector<Array> out = exe(a, b);
  const auto w = out[0].to_host<std::uint32_t>(0);
  const auto lo = out[1].to_host<float>(0), hi = out[2].to_host<float>(0);
  for (std::int64_t i = 0; i < kN; ++i) {
    const bf16 x(f32_input(0, i)), y(f32_input(1, i));
    EXPECT_EQ(w[i], std::uint32_t{x.bits()} | (std::uint32_t{y.bits()} << 16)) << i;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(lo[i]), std::bit_cast<std::uint32_t>(static_cast<float>(x))) << i;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(hi[i]), std::bit_cast<std::uint32_t>(static_cast<float>(y))) << i;
  }
  // NaN stays NaN in its half.
  const Array nan = Array::generate<float>(1, Shape{kN}, [](int, std::int64_t) { return std::nanf(""); });
  const auto wn = exe(nan, a)[0].to_host<std::uint32_t>(0);
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16::from_bits(static_cast<std::uint16_t>(wn[3] & 0xFFFFu)))));
}

/// Packs 32 / Bits i32 inputs at width Bits and unpacks each as i32 and u32.
template <class P, int Bits>
void check_int_packing() {
  constexpr int n = 32 / Bits;
  auto exe = kernel([](VmemRef<const std::int32_t, n, kN> xs, VmemRef<std::uint32_t, kN> w,
                       VmemRef<std::int32_t, n, kN> si, VmemRef<std::uint32_t, n, kN> ui) {
               Value<std::int32_t, extents<kN>> parts[n];
               for (int k = 0; k < n; ++k) parts[k] = xs.at(k, all).load();
               const auto word = pack_elementwise<P>(parts);
               w.store(word);
               for (int k = 0; k < n; ++k) {
                 si.at(k, all).store(unpack_elementwise<P, std::int32_t>(word, k));
                 ui.at(k, all).store(unpack_elementwise<P, std::uint32_t>(word, k));
               }
             }).compile(Mesh{{"x", 1}});
  const Array xs = Array::generate<std::int32_t>(1, Shape{n, kN}, [](int, std::int64_t i) {
    return int_input(static_cast<int>(i / kN), i % kN);
  });
  const std::vector<Array> out = exe(xs);
  const auto w = out[0].to_host<std::uint32_t>(0);
  const auto si = out[1].to_host<std::int32_t>(0);
  const auto ui = out[2].to_host<std::uint32_t>(0);
  const std::uint32_t mask = static_cast<std::uint32_t>((std::uint64_t{1} << Bits) - 1);
  for (std::int64_t i = 0; i < kN; ++i) {
    std::uint32_t expect = 0;
    for (int k = 0; k < n; ++k) expect |= (static_cast<std::uint32_t>(int_input(k, i)) & mask) << (k * Bits);
    EXPECT_EQ(w[i], expect) << Bits << " bits, " << i;
    for (int k = 0; k < n; ++k) {
      const std::uint32_t low = static_cast<std::uint32_t>(int_input(k, i)) & mask;
      const auto sign_extended = static_cast<std::int32_t>(low << (32 - Bits)) >> (32 - Bits);
      EXPECT_EQ(si[k * kN + i], sign_extended) << Bits << " bits, value " << k << ", " << i;
      EXPECT_EQ(ui[k * kN + i], low) << Bits << " bits, value " << k << ", " << i;
    }
  }
}

TEST(Packing, IntegersKeepTheirLowBitsAndUnpackSignOrZeroExtended) {
  check_int_packing<std::int8_t, 8>();
  check_int_packing<packed_int<4>, 4>();
  check_int_packing<packed_int<16>, 16>();
}

TEST(Packing, AnIndexOutOfRangeIsRefusedOnTheUsersLine) {
  const std::string msg = error_of([] {
    (void)kernel([](VmemRef<const std::uint32_t, kN> w, VmemRef<std::int32_t, kN> y) {
      g_line = __LINE__; y.store(unpack_elementwise<std::int8_t, std::int32_t>(w.load(), 4));
    }).compile(Mesh{{"x", 1}});
  });
  EXPECT_NE(msg.find("refx: unpack_elementwise: index 4 is out of range: a word holds 4 values of 8 bits"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
}

}  // namespace
