// refx::map(fn, values...): the element function as one compiled loop.
// Results against the same function on the host, fused equal to unfused,
// the loads and the store fused into it (one pass over the Refs), bf16
// rounded once, scalar operands broadcast, bool and explicit result types,
// and a trace error for operands of different shapes.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "support/graph_testing.hpp"
#include <refx/runtime/runtime.hpp>

using namespace refx;
using refx::graph_testing::fused_matches_unfused;
using refx::testing::contents;
using refx::testing::make_buffer_fn;

namespace {

using refx::graph_testing::live_ops;

constexpr auto relu_affine = [](float x, float y) { return std::max(x * 2.0f + y * 3.0f, 0.0f); };

// 1.5 and 3 are exact in bf16: the two forms differ only in their roundings.
constexpr auto bf16_fn = [](float a, float b) { return a * 1.5f + b / 3.0f; };

float xin(std::int64_t i) { return static_cast<float>((i * 37) % 101) * 0.37f - 20.0f; }
float yin(std::int64_t i) { return static_cast<float>((i * 11) % 53) * 0.61f - 15.0f; }

TEST(Map, F32ChainIsOneFusedLoopOverTheRefsAndMatchesTheHost) {
  constexpr std::int64_t n = 1000;  // not a multiple of the fused loop's tile
  // [snippet:map-relu-affine]
  const auto f = [](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<float, n> z) {
    z.store(map([](float a, float b) { return std::max(a * 2.0f + b * 3.0f, 0.0f); }, x.load(), y.load()));
  };
  // [/snippet]
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{n}, xin));
  args.push_back(make_buffer_fn<float>(Shape{n}, yin));
  args.emplace_back(DType::f32, Shape{n});
  const Graph g = fused_matches_unfused(f, args);
  // The loads, the map and the store are one fused op.
  EXPECT_EQ(live_ops(g, "load"), 0u) << to_text(g);
  EXPECT_EQ(live_ops(g, "store"), 0u) << to_text(g);
  EXPECT_EQ(live_ops(g, "fused"), 1u) << to_text(g);
  EXPECT_NE(to_text(g).find("fused[map loads=2 store]"), std::string::npos) << to_text(g);
  const auto z = contents<float>(args[2]);
  int positive = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(z[static_cast<std::size_t>(i)], relu_affine(xin(i), yin(i))) << i;
    positive += z[static_cast<std::size_t>(i)] > 0;
  }
  EXPECT_GT(positive, 100);
  EXPECT_LT(positive, 900);  // both sides of the max are exercised
}

TEST(Map, EqualsTheSameChainWrittenWithValueOperatorsInF32) {
  constexpr std::int64_t r = 7, c = 300;
  const auto f = [](VmemRef<const float, r, c> x, VmemRef<const float, r, c> y, VmemRef<float, r, c> a,
                    VmemRef<float, r, c> b) {
    a.store(map(relu_affine, x.load(), y.load()));
    b.store(max(x.load() * 2.0f + y.load() * 3.0f, 0.0f));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{r, c}, xin));
  args.push_back(make_buffer_fn<float>(Shape{r, c}, yin));
  args.emplace_back(DType::f32, Shape{r, c});
  args.emplace_back(DType::f32, Shape{r, c});
  fused_matches_unfused(f, args);
  EXPECT_EQ(contents<float>(args[2]), contents<float>(args[3]));
}

TEST(Map, StridedViewsAndScalarOperands) {
  const auto f = [](VmemRef<const float, 40, 64> x, VmemRef<const float, 1> k, VmemRef<float, 10, 16> z) {
    const Scalar<float> s = k.at(0).load();
    z.store(map([](float a, float b, float c) { return a * b - c; }, x.at(ds<10>(3, 4), ds<16>(5, 2)).load(), s,
                Scalar<float>(1.5f)));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<float>(Shape{40, 64}, xin));
  args.push_back(make_buffer_fn<float>(Shape{1}, [](std::int64_t) { return -2.25f; }));
  args.emplace_back(DType::f32, Shape{10, 16});
  fused_matches_unfused(f, args);
  const auto x = contents<float>(args[0]), z = contents<float>(args[2]);
  for (std::int64_t i = 0; i < 10; ++i)
    for (std::int64_t j = 0; j < 16; ++j)
      EXPECT_EQ(z[static_cast<std::size_t>(i * 16 + j)],
                x[static_cast<std::size_t>((3 + 4 * i) * 64 + 5 + 2 * j)] * -2.25f - 1.5f)
          << i << "," << j;
}

TEST(Map, Bf16IsComputedInF32AndRoundedOnceWhenStored) {
  constexpr std::int64_t n = 777;
  const auto f = [](VmemRef<const bf16, n> x, VmemRef<const bf16, n> y, VmemRef<bf16, n> z, VmemRef<bf16, n> w) {
    z.store(map(bf16_fn, x.load(), y.load()));               // rounded once
    w.store(x.load() * bf16(1.5f) + y.load() / bf16(3.0f));  // rounded per op
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<bf16>(Shape{n}, [](std::int64_t i) { return bf16(xin(i)); }));
  args.push_back(make_buffer_fn<bf16>(Shape{n}, [](std::int64_t i) { return bf16(yin(i)); }));
  args.emplace_back(DType::bf16, Shape{n});
  args.emplace_back(DType::bf16, Shape{n});
  fused_matches_unfused(f, args);
  const auto x = contents<bf16>(args[0]), y = contents<bf16>(args[1]), z = contents<bf16>(args[2]),
             w = contents<bf16>(args[3]);
  int differ = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    const bf16 want = bf16(bf16_fn(float(x[i]), float(y[i])));
    EXPECT_EQ(z[i].bits(), want.bits()) << i;
    differ += z[i].bits() != w[i].bits();
  }
  EXPECT_GT(differ, 0) << "one rounding and four roundings never differed: the test data shows nothing";
}

TEST(Map, ResultTypes) {
  constexpr std::int64_t n = 300;
  const auto f = [](VmemRef<const std::int8_t, n> a, VmemRef<const std::int8_t, n> b, VmemRef<std::int8_t, n> wrap,
                    VmemRef<std::int32_t, n> wide, VmemRef<bool, n> pos, VmemRef<double, n> d) {
    const auto plus = [](std::int8_t x, std::int8_t y) { return x + y; };  // int: promoted
    wrap.store(map<std::int8_t>(plus, a.load(), b.load()));
    wide.store(map(plus, a.load(), b.load()));  // the function's result type, i32
    pos.store(map([](std::int8_t x) { return x > 0; }, a.load()));
    d.store(map<double>([](std::int8_t x, std::int8_t y) { return x * 0.5 + y; }, a.load(), b.load()));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<std::int8_t>(Shape{n}, [](std::int64_t i) { return std::int8_t(i * 7 - 128); }));
  args.push_back(make_buffer_fn<std::int8_t>(Shape{n}, [](std::int64_t i) { return std::int8_t(i * 13 + 5); }));
  args.emplace_back(DType::i8, Shape{n});
  args.emplace_back(DType::i32, Shape{n});
  args.emplace_back(DType::pred, Shape{n});
  args.emplace_back(DType::f64, Shape{n});
  fused_matches_unfused(f, args);
  const auto a = contents<std::int8_t>(args[0]), b = contents<std::int8_t>(args[1]);
  const auto wrap = contents<std::int8_t>(args[2]);
  const auto wide = contents<std::int32_t>(args[3]);
  const auto pos = contents<bool>(args[4]);
  const auto d = contents<double>(args[5]);
  int wrapped = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    EXPECT_EQ(wide[i], a[i] + b[i]) << i;
    EXPECT_EQ(wrap[i], static_cast<std::int8_t>(a[i] + b[i])) << i;
    wrapped += wrap[i] != wide[i];
    EXPECT_EQ(pos[i], a[i] > 0) << i;
    EXPECT_EQ(d[i], a[i] * 0.5 + b[i]) << i;
  }
  EXPECT_GT(wrapped, 0);
}

// Static extents that do not broadcast do not compile (compile_fail/
// map_operands_do_not_broadcast.cpp); extents known when traced are checked then.
TEST(Map, OperandsThatDoNotBroadcastAreATraceError) {
  const auto f = [](Ref<const float, extents<dyn, dyn>> x, Ref<const float, extents<dyn, dyn>> y,
                    Ref<float, extents<dyn, dyn>> z) {
    z.store(map([](float a, float b) { return a + b; }, x.load(), y.load()));
  };
  try {
    trace(f, {Shape{4, 8}, Shape{8, 4}, Shape{4, 8}});
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("the shapes [4,8] and [8,4] of map's operands do not broadcast"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("map_test.cpp"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("MapKernel"), std::string::npos) << e.what();  // no mangled C++ type
  }
}

TEST(Map, EachFunctionHasAReadableNameOfItsOwn) {
  const auto f = [](VmemRef<const float, 8> x, VmemRef<float, 8> y, VmemRef<float, 8> z) {
    y.store(map([](float a) { return a * 2.0f; }, x.load()));
    z.store(map([](float a) { return a * 3.0f; }, x.load()));
  };
  const Graph g = trace(f);
  std::vector<std::string> names;
  for (std::size_t b = 0; b < g.num_blocks(); ++b)
    for (OpId o : g.block(static_cast<BlockId>(b)).ops)
      if (g.op(o).prim->name.starts_with("map")) names.emplace_back(g.op(o).prim->name);
  ASSERT_EQ(names.size(), 2u) << to_text(g);
  EXPECT_NE(names[0], names[1]);
  for (const std::string& n : names) EXPECT_TRUE(std::regex_match(n, std::regex("map#[0-9]+"))) << n;
  const std::string dot = to_dot(g);
  EXPECT_NE(dot.find(names[0]), std::string::npos) << dot;
  EXPECT_EQ(dot.find("MapKernel"), std::string::npos) << dot;
}

TEST(Map, RunsInACompiledKernel) {
  constexpr std::int64_t n = 65536;
  const Executable exe = kernel([](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<float, n> z) {
                           z.store(map(relu_affine, x.load(), y.load()));
                         }).compile(Mesh{{"x", 2}});
  const auto out = exe(Array::generate<float>(2, Shape{n}, [](int d, std::int64_t i) { return xin(i + d); }),
                       Array::generate<float>(2, Shape{n}, [](int, std::int64_t i) { return yin(i); }));
  for (int d = 0; d < 2; ++d) {
    const std::vector<float> z = out[0].to_host<float>(d);
    for (std::int64_t i = 0; i < n; i += 97)
      EXPECT_EQ(z[static_cast<std::size_t>(i)], relu_affine(xin(i + d), yin(i))) << d << " " << i;
  }
}

}  // namespace
