// Reinterpreting Ref views: `ref.bitcast<U>()` (the same bytes as another
// element type; the last dimension scales with the element size) and
// `ref.reshape<Dims...>()` (a contiguous view with other extents). Loads,
// stores and accumulations through them are checked against host
// reinterpretation (memcpy), copies through reshaped views in the
// interpreter and the threaded runtime (under the race detector), and the
// verifier sees a reinterpreted view's footprint in its Ref.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <refx/passes/pipeline.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>
#include <refx/ir/interpret.hpp>

#include "support/testing.hpp"

using namespace refx;
using namespace refx::testing;

namespace {

/// The bytes of `from` (row-major) read as elements of To.
template <class To, class From>
std::vector<To> reinterpret(const std::vector<From>& from) {
  std::vector<To> out(from.size() * sizeof(From) / sizeof(To));
  std::memcpy(static_cast<void*>(out.data()), from.data(), out.size() * sizeof(To));
  return out;
}

/// Every byte plus `k`, wrapping.
std::vector<std::uint8_t> bytes_plus(const std::vector<std::uint8_t>& bytes, int k) {
  std::vector<std::uint8_t> out;
  for (std::uint8_t b : bytes) out.push_back(static_cast<std::uint8_t>(b + k));
  return out;
}

TEST(Bitcast, LoadAndStoreBetweenF32AndU32) {
  Graph g = trace([](VmemRef<float, 2, 4> x, VmemRef<std::uint32_t, 2, 4> bits, VmemRef<float, 2, 4> y) {
    auto xb = x.bitcast<std::uint32_t>();
    static_assert(std::is_same_v<decltype(xb), VmemRef<std::uint32_t, 2, 4>>);
    bits.store(xb.load());
    // Flip the sign bits through a u32 view of y: y = -x.
    y.bitcast<std::uint32_t>().store(xb.load() ^ 0x80000000u);
    // And back: a f32 view of a u32 Ref.
    x.store(bits.bitcast<float>().load() * 2.0f);
  });
  const std::vector<float> in = {1.5f, -2.25f, 0.0f, 3e38f, -0.0f, 1e-40f, 7.0f, -1.0f};
  Buffer bx = make_buffer<float>(Shape{2, 4}, in), bb(DType::u32, Shape{2, 4}), by(DType::f32, Shape{2, 4});
  interpret(g, bx, bb, by);
  EXPECT_EQ(contents<std::uint32_t>(bb), reinterpret<std::uint32_t>(in));
  std::vector<float> neg, twice;
  for (float v : in) neg.push_back(-v), twice.push_back(v * 2.0f);
  EXPECT_EQ(reinterpret<std::uint32_t>(contents<float>(by)), reinterpret<std::uint32_t>(neg));  // -0.0 too
  EXPECT_EQ(contents<float>(bx), twice);
}

TEST(Bitcast, NarrowerElementsScaleTheLastDimension) {
  Graph g = trace([](VmemRef<const std::uint32_t, 2, 4> x, VmemRef<std::uint8_t, 2, 16> bytes, VmemRef<std::uint32_t, 2, 4> y) {
    auto xb = x.bitcast<std::uint8_t>();
    static_assert(std::is_same_v<decltype(xb), VmemRef<const std::uint8_t, 2, 16>>);
    bytes.store(xb.load());
    y.bitcast<std::uint8_t>().store(xb.load() + std::uint8_t{1});  // every byte + 1, wrapping
  });
  const std::vector<std::uint32_t> in = {0x01020304u, 0xFFFFFFFFu, 0, 0x80FF7F00u, 1, 2, 0xDEADBEEFu, 0x12345678u};
  Buffer bx = make_buffer<std::uint32_t>(Shape{2, 4}, in), bb(DType::u8, Shape{2, 16}), by(DType::u32, Shape{2, 4});
  interpret(g, bx, bb, by);
  const auto want_bytes = reinterpret<std::uint8_t>(in);
  EXPECT_EQ(contents<std::uint8_t>(bb), want_bytes);
  EXPECT_EQ(contents<std::uint32_t>(by), reinterpret<std::uint32_t>(bytes_plus(want_bytes, 1)));
}

TEST(Bitcast, WiderElementsFromBf16PairsAndAStridedOuterDimension) {
  // Rows 0 and 2 of a bf16 [4, 8] Ref (a strided view, contiguous along the
  // last dimension) read as u32 [2, 4]; then written back as i32 through
  // rows 1 and 3.
  Graph g = trace([](VmemRef<bf16, 4, 8> x, VmemRef<std::uint32_t, 2, 4> y) {
    auto v = x.at(ds(0, 2, 2), all).bitcast<std::uint32_t>();
    static_assert(std::is_same_v<decltype(v), Ref<std::uint32_t, extents<dyn, 4>, Vmem>>);
    y.store(v.load());
    x.at(ds(1, 2, 2), all).bitcast<std::int32_t>().store(cast<std::int32_t>(v.load()) + 1);
  });
  Buffer bx = make_buffer_fn<bf16>(Shape{4, 8}, [](std::int64_t i) { return static_cast<float>(i) - 11.5f; });
  const auto host = contents<bf16>(bx);
  Buffer by(DType::u32, Shape{2, 4});
  interpret(g, bx, by);
  std::vector<bf16> rows02(host.begin(), host.begin() + 8);
  rows02.insert(rows02.end(), host.begin() + 16, host.begin() + 24);
  const auto want = reinterpret<std::uint32_t>(rows02);
  EXPECT_EQ(contents<std::uint32_t>(by), want);
  const auto after = contents<bf16>(bx);
  for (int r : {1, 3}) {
    std::vector<std::int32_t> words;
    for (int j = 0; j < 4; ++j) words.push_back(static_cast<std::int32_t>(want[static_cast<std::size_t>((r / 2) * 4 + j)]) + 1);
    const auto halves = reinterpret<bf16>(words);
    for (int j = 0; j < 8; ++j)
      EXPECT_EQ(std::bit_cast<std::uint16_t>(after[static_cast<std::size_t>(r * 8 + j)]), std::bit_cast<std::uint16_t>(halves[static_cast<std::size_t>(j)]))
          << r << "," << j;
  }
  for (int j = 0; j < 8; ++j)  // rows 0 and 2 untouched
    EXPECT_EQ(std::bit_cast<std::uint16_t>(after[static_cast<std::size_t>(j)]), std::bit_cast<std::uint16_t>(host[static_cast<std::size_t>(j)]));
}

TEST(Bitcast, AccumulatesInTheViewsElementType) {
  Graph g = trace([](VmemRef<float, 4> x) { x.bitcast<std::uint32_t>() += full<std::uint32_t, 4>(1u); });
  const std::vector<float> in = {1.0f, -1.0f, 0.0f, 2.5f};
  Buffer bx = make_buffer<float>(Shape{4}, in);
  interpret(g, bx);
  std::vector<float> want;
  for (float v : in) want.push_back(std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) + 1u));  // the next float
  EXPECT_EQ(contents<float>(bx), want);
}

TEST(Bitcast, TraceErrors) {
  // Strided along the last dimension, with a size change.
  EXPECT_TRUE(throws_with<TraceError>(
      [] { trace([](VmemRef<std::uint32_t, 8> x) { (void)x.at(ds(0, 4, 2)).bitcast<std::uint8_t>().load(); }); },
      {"refx: Ref::bitcast:", "not contiguous along its last dimension", "ref_views_test.cpp"}));
  // A last dimension of 3 bytes cannot hold u32 words (dyn extent: found when traced).
  EXPECT_TRUE(throws_with<TraceError>(
      [] { trace([](Ref<std::uint8_t, extents<dyn>> x) { (void)x.bitcast<std::uint32_t>(); }, {Shape{6}}); },
      {"refx: Ref::bitcast:", "6 bytes", "not a multiple of the 4 bytes of u32"}));
  // Copies through a bitcast view.
  EXPECT_TRUE(throws_with<TraceError>(
      [] {
        trace([](VmemRef<float, 8> x, VmemRef<std::uint32_t, 8> y) {
          run_scoped([&](DmaSemaphore sem) {
            auto c = make_async_copy(x.bitcast<std::uint32_t>(), y, sem);
            c.start();
            c.wait();
          });
        });
      },
      {"cannot copy through a bitcast Ref view", "the source is a u32 view of a f32 Ref"}));
}

// ---------------------------------------------------------------- reshape

TEST(RefReshape, LoadAndStoreInRowMajorOrder) {
  Graph g = trace([](VmemRef<float, 4, 6> x, VmemRef<float, 24> flat, VmemRef<float, 12> rows12) {
    flat.store(x.reshape<24>().load());
    rows12.store(x.at(ds(1, 2), all).reshape<12>().load());  // rows 1 and 2: contiguous
    x.reshape<3, 8>().store(iota<float, 3, 8>(1) + iota<float, 3, 8>(0) * 100.0f);
  });
  Buffer bx = make_buffer_fn<float>(Shape{4, 6}, [](std::int64_t i) { return static_cast<float>(i); });
  Buffer bf(DType::f32, Shape{24}), br(DType::f32, Shape{12});
  interpret(g, bx, bf, br);
  std::vector<float> want, rows, written;
  for (int i = 0; i < 24; ++i) want.push_back(static_cast<float>(i));
  for (int i = 6; i < 18; ++i) rows.push_back(static_cast<float>(i));
  for (int i = 0; i < 24; ++i) written.push_back(static_cast<float>((i / 8) * 100 + i % 8));
  EXPECT_EQ(contents<float>(bf), want);
  EXPECT_EQ(contents<float>(br), rows);
  EXPECT_EQ(contents<float>(bx), written);
}

TEST(RefReshape, BitcastThenReshapeAndAccumulate) {
  // A u32 [2, 4] Ref as 32 bytes, reshaped to [4, 8]: byte (i, j) is byte 8i + j.
  Graph g = trace([](VmemRef<std::uint32_t, 2, 4> x, VmemRef<std::uint8_t, 4, 8> y) {
    auto b = x.bitcast<std::uint8_t>().reshape<4, 8>();
    y.store(b.load());
    b += full<std::uint8_t, 4, 8>(std::uint8_t{0x10});
  });
  const std::vector<std::uint32_t> in = {0x01020304u, 0xF0F1F2F3u, 5, 6, 7, 8, 0xAABBCCDDu, 0};
  Buffer bx = make_buffer<std::uint32_t>(Shape{2, 4}, in), by(DType::u8, Shape{4, 8});
  interpret(g, bx, by);
  const auto bytes = reinterpret<std::uint8_t>(in);
  EXPECT_EQ(contents<std::uint8_t>(by), bytes);
  EXPECT_EQ(contents<std::uint32_t>(bx), reinterpret<std::uint32_t>(bytes_plus(bytes, 0x10)));
}

TEST(RefReshape, TraceErrors) {
  EXPECT_TRUE(throws_with<TraceError>(
      [] { trace([](VmemRef<float, 4, 6> x) { (void)x.at(all, ds(0, 3)).reshape<12>(); }); },
      {"refx: Ref::reshape:", "is not contiguous", "ref_views_test.cpp"}));
  EXPECT_TRUE(throws_with<TraceError>(
      [] { trace([](Ref<float, extents<dyn>> x) { (void)x.reshape<3, 4>(); }, {Shape{10}}); },
      {"refx: Ref::reshape:", "[10]", "[3,4]", "element count"}));
  EXPECT_TRUE(throws_with<TraceError>(
      [] { trace([](VmemRef<float, 4, 6> x) { (void)x.reshape<24>().at(ds(0, 4)); }); },
      {"refx: .at(...) on a reshaped or bitcast Ref view", "index the Ref first"}));
}

// A copy from a reshaped view into a plain Ref of its shape, and back from a
// plain Ref into a reshaped view.
auto reshape_copies = [](VmemRef<const float, 4, 6> x, VmemRef<float, 24> flat, VmemRef<float, 2, 12> y) {
  run_scoped([&](DmaSemaphore sem) {
    auto c = make_async_copy(x.reshape<24>(), flat, sem);
    c.start();
    c.wait();
    auto d = make_async_copy(x.reshape<2, 12>(), y, sem);
    d.start();
    d.wait();
    auto e = make_async_copy(y.at(1), flat.at(ds(0, 12)), sem);  // plain to plain, overwriting the first half
    e.start();
    e.wait();
  });
};

std::vector<float> reshape_copies_flat() {
  std::vector<float> want;
  for (int i = 12; i < 24; ++i) want.push_back(static_cast<float>(i) * 0.5f);
  for (int i = 12; i < 24; ++i) want.push_back(static_cast<float>(i) * 0.5f);
  return want;
}

TEST(RefReshape, AsyncCopiesInTheInterpreter) {
  Graph g = trace(reshape_copies);
  Buffer bx = make_buffer_fn<float>(Shape{4, 6}, [](std::int64_t i) { return static_cast<float>(i) * 0.5f; });
  Buffer bf(DType::f32, Shape{24}), by(DType::f32, Shape{2, 12});
  interpret(g, bx, bf, by);
  EXPECT_EQ(contents<float>(bf), reshape_copies_flat());
  EXPECT_EQ(contents<float>(by), contents<float>(bx));
}

TEST(RefReshape, IntoAReshapedDestination) {
  Graph g = trace([](VmemRef<const float, 24> x, VmemRef<float, 4, 6> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x.at(ds(0, 12)), y.at(ds(2, 2), all).reshape<12>(), sem);
      c.start();
      c.wait();
    });
  });
  Buffer bx = make_buffer_fn<float>(Shape{24}, [](std::int64_t i) { return static_cast<float>(i) + 1.0f; });
  Buffer by = make_buffer_fn<float>(Shape{4, 6}, [](std::int64_t) { return -1.0f; });
  interpret(g, bx, by);
  std::vector<float> want(12, -1.0f);
  for (int i = 0; i < 12; ++i) want.push_back(static_cast<float>(i) + 1.0f);
  EXPECT_EQ(contents<float>(by), want);
}

// Through the compile pipeline (verify, schedule, fuse) and the threaded
// runtime's copy engine, with the race detector on: no race, same result.
TEST(RefReshape, AsyncCopiesInTheRuntimeUnderTheRaceDetector) {
  Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true});
  for (int n : {1, 2}) {
    auto exe = kernel(reshape_copies).compile(Mesh{{"x", n}}, {}, rt);
    const auto x = Array::generate<float>(n, Shape{4, 6}, [](int, std::int64_t i) { return static_cast<float>(i) * 0.5f; }, rt);
    auto out = exe(x);
    for (int d = 0; d < n; ++d) {
      EXPECT_EQ(out[0].to_host<float>(d), reshape_copies_flat()) << "device " << d;
      EXPECT_EQ(out[1].to_host<float>(d), x.to_host<float>(d)) << "device " << d;
    }
  }
}

// Under the race detector too: it sees a bitcast view's footprint in its Ref.
TEST(RefViews, BitcastAndReshapeThroughACompiledKernel) {
  Runtime rt(RuntimeOptions{.workers = 2, .detect_races = true});
  auto exe = kernel([](VmemRef<const float, 8, 16> x, VmemRef<std::uint32_t, 128> bits, VmemRef<float, 8, 16> y,
                       VmemRef<std::uint8_t, 8, 64> bytes) {
               bits.reshape<8, 16>().store(x.bitcast<std::uint32_t>().load() & 0x7FFFFFFFu);  // |x| as bits
               y.store(bits.bitcast<float>().reshape<8, 16>().load() + 1.0f);
               bytes.store(y.bitcast<std::uint8_t>().load());
               y.at(0).bitcast<std::uint8_t>() += full<std::uint8_t, 64>(std::uint8_t{1});
             }).compile(Mesh{{"x", 1}}, {}, rt);
  const auto x = Array::generate<float>(1, Shape{8, 16}, [](int, std::int64_t i) { return static_cast<float>(i % 7) - 3.25f; }, rt);
  auto out = exe(x);
  const auto host = x.to_host<float>(0);
  const auto bits = out[0].to_host<std::uint32_t>(0);
  const auto y = out[1].to_host<float>(0);
  const auto bytes = out[2].to_host<std::uint8_t>(0);
  std::vector<float> want;
  for (std::size_t i = 0; i < host.size(); ++i) {
    EXPECT_EQ(bits[i], std::bit_cast<std::uint32_t>(host[i]) & 0x7FFFFFFFu) << i;
    want.push_back(std::fabs(host[i]) + 1.0f);
  }
  EXPECT_EQ(bytes, reinterpret<std::uint8_t>(want));
  auto want_bytes = reinterpret<std::uint8_t>(want);
  for (std::size_t i = 0; i < 64; ++i) want_bytes[i] = static_cast<std::uint8_t>(want_bytes[i] + 1);  // row 0, bytewise
  EXPECT_EQ(reinterpret<std::uint8_t>(y), want_bytes);
}

// A reduction of a loaded Ref reads the Ref in place (passes/fuse.hpp); through
// a bitcast view it must see the view's elements, through a reshaped one its extents.
TEST(RefViews, ReductionsOfLoadedReinterpretedViews) {
  auto exe = kernel([](VmemRef<const float, 4096> x, VmemRef<std::uint32_t, 64> bit_sums, VmemRef<float, 64> col_max) {
               bit_sums.store(reduce_sum<1>(x.reshape<64, 64>().bitcast<std::uint32_t>().load()));
               col_max.store(reduce_max<0>(x.reshape<64, 64>().load()));
             }).compile(Mesh{{"x", 1}});
  const auto x = Array::generate<float>(1, Shape{4096}, [](int, std::int64_t i) { return static_cast<float>((i * 37) % 101) - 50.5f; });
  const auto out = exe(x);
  const auto host = x.to_host<float>(0);
  const auto sums = out[0].to_host<std::uint32_t>(0);
  const auto maxima = out[1].to_host<float>(0);
  for (std::size_t r = 0; r < 64; ++r) {
    std::uint32_t want = 0;
    float most = -INFINITY;
    for (std::size_t c = 0; c < 64; ++c) {
      want += std::bit_cast<std::uint32_t>(host[r * 64 + c]);  // wraps, as the u32 sum does
      most = std::max(most, host[c * 64 + r]);
    }
    EXPECT_EQ(sums[r], want) << r;
    EXPECT_EQ(maxima[r], most) << r;
  }
}

// ---------------------------------------------------------------- the verifier sees the footprint

TEST(RefViews, WritingTheSourceOfACopyFromAReshapedViewIsCaught) {
  auto g = trace([](VmemRef<float, 4, 6> x, VmemRef<float, 24> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x.reshape<24>(), y, sem);
      c.start();
      x.at(3, ds(5, 1)).store(full<float, 1>(1.0f));  // the last element of the reshaped source
      c.wait();
    });
  });
  EXPECT_TRUE(throws_with<VerifyError>([&] { passes::verify(g); }, {"writes the source"}));
}

TEST(RefViews, ReadingTheDestinationThroughABitcastViewIsCaught) {
  auto g = trace([](VmemRef<const float, 2, 8> x, VmemRef<float, 2, 8> y, VmemRef<std::uint8_t, 32> z) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start();
      z.store(y.at(1).bitcast<std::uint8_t>().load());
      c.wait();
    });
  });
  EXPECT_TRUE(throws_with<VerifyError>([&] { passes::verify(g); }, {"reads the destination"}));
}

TEST(RefViews, DisjointRegionsThroughReinterpretedViewsAreFine) {
  auto g = trace([](VmemRef<const float, 2, 8> x, VmemRef<float, 4, 8> y, VmemRef<std::uint8_t, 32> z) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y.at(ds(0, 2), all), sem);
      c.start();
      z.store(y.at(ds(2, 1), all).bitcast<std::uint8_t>().reshape<32>().load());  // row 2: not the destination
      c.wait();
    });
  });
  EXPECT_NO_THROW(passes::verify(g));
}

TEST(RefViews, PrintedWithTheirLayout) {
  Graph g = trace([](VmemRef<std::uint32_t, 2, 4> x, VmemRef<std::uint8_t, 32> y) {
    y.store(x.bitcast<std::uint8_t>().reshape<32>().load());
  });
  const std::string text = to_text(g);
  EXPECT_NE(text.find("as u8[32]"), std::string::npos) << text;
}

}  // namespace
