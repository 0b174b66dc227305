// Broadcasting as lax does after explicit rank alignment: extent-1
// dimensions stretch in elementwise ops, select and map; keepdims
// reductions, negative axes, expand_dims and broadcast_to. Each kernel runs
// in the reference interpreter against a host reference, and through the
// fusion pass, whose loop reads a broadcast operand in place (no broadcast
// op is left) with bit-identical results.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <refx/ir/interpret.hpp>
#include <refx/refx.hpp>

#include "support/graph_testing.hpp"
#include "support/testing.hpp"

using namespace refx;
using namespace refx::testing;
using namespace refx::graph_testing;

namespace {

// Not a multiple of the fused loop's 512-element tile, and rows that straddle tiles.
constexpr std::int64_t M = 7, N = 300;

float element(std::int64_t i) { return static_cast<float>((i * 37) % 101) * 0.25f - 12.0f; }

std::vector<float> host(std::int64_t n, std::int64_t salt = 0) {
  std::vector<float> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(element(i + salt));
  return v;
}

TEST(Broadcast, RowMaximumSubtractedWithKeepdims) {
  Graph g = trace([](VmemRef<const float, M, N> x, VmemRef<float, M, N> y, VmemRef<float, M, 1> m) {
    const auto v = x.load();
    const auto rowmax = reduce_max<1>(v, keepdims);
    static_assert(std::is_same_v<decltype(rowmax), const Value<float, extents<M, 1>>>);
    m.store(rowmax);
    y.store(v - rowmax);
  });
  const auto xs = host(M * N);
  Buffer bx = make_buffer<float>(Shape{M, N}, xs), by(DType::f32, Shape{M, N}), bm(DType::f32, Shape{M, 1});
  interpret(g, bx, by, bm);
  const auto got = contents<float>(by), gm = contents<float>(bm);
  for (std::int64_t i = 0; i < M; ++i) {
    float mx = xs[static_cast<std::size_t>(i * N)];
    for (std::int64_t j = 0; j < N; ++j) mx = std::max(mx, xs[static_cast<std::size_t>(i * N + j)]);
    ASSERT_EQ(gm[static_cast<std::size_t>(i)], mx) << i;
    for (std::int64_t j = 0; j < N; ++j)
      ASSERT_EQ(got[static_cast<std::size_t>(i * N + j)], xs[static_cast<std::size_t>(i * N + j)] - mx) << i << "," << j;
  }
}

TEST(Broadcast, ColumnRowAndBothSidesStretch) {
  Graph g = trace([](VmemRef<const float, M, N> x, VmemRef<const float, N> bias, VmemRef<const float, M, 1> scale,
                     VmemRef<float, M, N> y, VmemRef<float, M, N> outer) {
    const auto row = expand_dims<0>(bias.load());  // <1, N>
    static_assert(std::is_same_v<decltype(row), const Value<float, extents<1, N>>>);
    y.store(x.load() * scale.load() + row);  // <M, N> * <M, 1> + <1, N>
    outer.store(scale.load() * row);         // <M, 1> * <1, N>: both sides stretch
  });
  const auto xs = host(M * N), bs = host(N, 5), ss = host(M, 11);
  Buffer bx = make_buffer<float>(Shape{M, N}, xs), bb = make_buffer<float>(Shape{N}, bs),
         bsc = make_buffer<float>(Shape{M, 1}, ss), by(DType::f32, Shape{M, N}), bo(DType::f32, Shape{M, N});
  interpret(g, bx, bb, bsc, by, bo);
  const auto got = contents<float>(by), go = contents<float>(bo);
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      const auto k = static_cast<std::size_t>(i * N + j);
      const float s = ss[static_cast<std::size_t>(i)], b = bs[static_cast<std::size_t>(j)];
      ASSERT_EQ(got[k], xs[k] * s + b) << i << "," << j;
      ASSERT_EQ(go[k], s * b) << i << "," << j;
    }
}

TEST(Broadcast, SelectComparisonsAndMapBroadcast) {
  Graph g = trace([](VmemRef<const float, M, N> x, VmemRef<const float, M, 1> limit, VmemRef<const float, 1, N> fill,
                     VmemRef<float, M, N> clipped, VmemRef<float, M, N> mapped) {
    const auto v = x.load();
    clipped.store(select(v > limit.load(), fill.load(), v));  // condition <M, N>, alternatives <1, N> and <M, N>
    mapped.store(map([](float a, float l, float f) { return a > l ? f : a * 2.0f; }, v, limit.load(), fill.load()));
  });
  const auto xs = host(M * N), ls = host(M, 3), fs = host(N, 7);
  Buffer bx = make_buffer<float>(Shape{M, N}, xs), bl = make_buffer<float>(Shape{M, 1}, ls),
         bf = make_buffer<float>(Shape{1, N}, fs), bc(DType::f32, Shape{M, N}), bm(DType::f32, Shape{M, N});
  interpret(g, bx, bl, bf, bc, bm);
  const auto gc = contents<float>(bc), gm = contents<float>(bm);
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      const auto k = static_cast<std::size_t>(i * N + j);
      const float a = xs[k], l = ls[static_cast<std::size_t>(i)], f = fs[static_cast<std::size_t>(j)];
      ASSERT_EQ(gc[k], a > l ? f : a) << i << "," << j;
      ASSERT_EQ(gm[k], a > l ? f : a * 2.0f) << i << "," << j;
    }
}

TEST(Broadcast, BroadcastToAlignsAtTheEnd) {
  Graph g = trace([](VmemRef<const std::int32_t, N> row, VmemRef<const std::int32_t, M, 1> col, SmemRef<std::int32_t> s,
                     VmemRef<std::int32_t, 2, M, N> a, VmemRef<std::int32_t, M, N> b, VmemRef<std::int32_t, M, N> c) {
    a.store(broadcast_to<2, M, N>(row.load()));  // leading dimensions added
    b.store(broadcast_to<M, N>(col.load()));     // the extent-1 one stretched
    c.store(broadcast_to<M, N>(s.load()));       // a scalar
  });
  std::vector<std::int32_t> rs, cs;
  for (std::int32_t j = 0; j < N; ++j) rs.push_back(j * 3 - 100);
  for (std::int32_t i = 0; i < M; ++i) cs.push_back(1000 + i);
  Buffer br = make_buffer<std::int32_t>(Shape{N}, rs), bc = make_buffer<std::int32_t>(Shape{M, 1}, cs),
         bs = make_buffer<std::int32_t>(Shape{}, {42}), ba(DType::i32, Shape{2, M, N}), bb(DType::i32, Shape{M, N}),
         bcc(DType::i32, Shape{M, N});
  interpret(g, br, bc, bs, ba, bb, bcc);
  const auto ga = contents<std::int32_t>(ba), gb = contents<std::int32_t>(bb), gc = contents<std::int32_t>(bcc);
  for (std::int64_t k = 0; k < 2 * M * N; ++k) ASSERT_EQ(ga[static_cast<std::size_t>(k)], rs[static_cast<std::size_t>(k % N)]);
  for (std::int64_t k = 0; k < M * N; ++k) {
    ASSERT_EQ(gb[static_cast<std::size_t>(k)], cs[static_cast<std::size_t>(k / N)]);
    ASSERT_EQ(gc[static_cast<std::size_t>(k)], 42);
  }
}

TEST(Broadcast, KeepdimsReductionsAndNegativeAxes) {
  Graph g = trace([](VmemRef<const float, 3, 4, 5> x, VmemRef<float, 3, 1, 5> s, VmemRef<float, 3, 4, 1> mx,
                     VmemRef<float, 1, 4, 5> mn, VmemRef<float, 3, 4> last) {
    const auto v = x.load();
    s.store(reduce_sum<1>(v, keepdims));
    mx.store(reduce_max<-1>(v, keepdims));
    mn.store(reduce_min<-3>(v, keepdims));
    static_assert(std::is_same_v<decltype(reduce_sum<-1>(v)), Value<float, extents<3, 4>>>);
    last.store(reduce_sum<-1>(v));
  });
  const auto xs = host(60);
  Buffer bx = make_buffer<float>(Shape{3, 4, 5}, xs), bs(DType::f32, Shape{3, 1, 5}), bmx(DType::f32, Shape{3, 4, 1}),
         bmn(DType::f32, Shape{1, 4, 5}), bl(DType::f32, Shape{3, 4});
  interpret(g, bx, bs, bmx, bmn, bl);
  const auto at = [&](std::int64_t i, std::int64_t j, std::int64_t k) { return xs[static_cast<std::size_t>((i * 4 + j) * 5 + k)]; };
  const auto gs = contents<float>(bs), gmx = contents<float>(bmx), gmn = contents<float>(bmn), gl = contents<float>(bl);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t k = 0; k < 5; ++k) {
      float sum = 0;
      for (std::int64_t j = 0; j < 4; ++j) sum += at(i, j, k);
      EXPECT_FLOAT_EQ(gs[static_cast<std::size_t>(i * 5 + k)], sum);
    }
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j) {
      float m = at(i, j, 0), sum = 0;
      for (std::int64_t k = 0; k < 5; ++k) m = std::max(m, at(i, j, k)), sum += at(i, j, k);
      EXPECT_EQ(gmx[static_cast<std::size_t>(i * 4 + j)], m);
      EXPECT_FLOAT_EQ(gl[static_cast<std::size_t>(i * 4 + j)], sum);
    }
  for (std::int64_t j = 0; j < 4; ++j)
    for (std::int64_t k = 0; k < 5; ++k)
      EXPECT_EQ(gmn[static_cast<std::size_t>(j * 5 + k)], std::min({at(0, j, k), at(1, j, k), at(2, j, k)}));
}

TEST(Broadcast, ShapesKnownWhenTracedThatDoNotBroadcastNameTheLine) {
  const auto f = [] {
    trace([](Ref<const float, extents<dyn, dyn>> x, Ref<const float, extents<dyn, dyn>> y,
             Ref<float, extents<dyn, dyn>> z) { z.store(x.load() + y.load()); },
          {Shape{4, 8}, Shape{4, 3}, Shape{4, 8}});
  };
  EXPECT_TRUE(throws_with<TraceError>(
      f, {"refx: the shapes [4,8] and [4,3] of add's operands do not broadcast: dimension 1 is 8 on one side and 3 on "
          "the other",
          "broadcast_test.cpp", "1 on one side"}));
  const auto s = [] {
    trace([](Ref<const float, extents<dyn, dyn>> x, Ref<const float, extents<dyn, dyn>> y,
             Ref<float, extents<dyn, dyn>> z) { z.store(select(x.load() > 0.0f, y.load(), x.load())); },
          {Shape{4, 8}, Shape{2, 8}, Shape{4, 8}});
  };
  EXPECT_TRUE(throws_with<TraceError>(s, {"select's operands do not broadcast", "broadcast_test.cpp"}));
  // Extents of 1 known only when traced stretch as static ones do.
  Graph g = trace([](Ref<const float, extents<dyn, dyn>> x, Ref<const float, extents<dyn, dyn>> y,
                     Ref<float, extents<dyn, dyn>> z) { z.store(x.load() + y.load()); },
                  {Shape{2, 3}, Shape{2, 1}, Shape{2, 3}});
  Buffer bx = make_buffer<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}), by = make_buffer<float>(Shape{2, 1}, {10, 20}),
         bz(DType::f32, Shape{2, 3});
  interpret(g, bx, by, bz);
  EXPECT_EQ(contents<float>(bz), (std::vector<float>{11, 12, 13, 24, 25, 26}));
}

TEST(Broadcast, PrintedGraphShowsTheBroadcast) {
  Graph g = trace([](VmemRef<const float, 4, 8> x, VmemRef<float, 4, 8> y) { y.store(x.load() - reduce_max<1>(x.load(), keepdims)); });
  const std::string text = to_text(g);
  EXPECT_NE(text.find("reduce_max[1,1]"), std::string::npos) << text;
  EXPECT_NE(text.find("broadcast[2,4,8]"), std::string::npos) << text;
}

// The fused loop reads the stretched operand through zero strides: no
// broadcast op is left, and every element is bit-identical to the unfused
// graph's, in f32 and in bf16 (computed in f32, rounded once).
template <class T>
void softmax_numerator_fuses() {
  const auto f = [](VmemRef<const T, M, N> x, VmemRef<const T, 1, N> bias, VmemRef<T, M, N> y) {
    const auto s = x.load() + bias.load();
    y.store(exp(s - reduce_max<1>(s, keepdims)));
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer_fn<T>(Shape{M, N}, [](std::int64_t i) { return static_cast<T>(element(i) * 0.1f); }));
  args.push_back(make_buffer_fn<T>(Shape{1, N}, [](std::int64_t i) { return static_cast<T>(element(i + 9) * 0.05f); }));
  args.emplace_back(dtype_v<T>, Shape{M, N});
  Graph g = fused_matches_unfused(f, args);
  const std::string text = to_text(g);
  EXPECT_EQ(live_ops(g, "broadcast"), 0u) << text;
  EXPECT_EQ(live_ops(g, "fused"), 2u) << text;  // x + bias, and exp(s - max) with its store
  EXPECT_EQ(live_ops(g, "reduce_max"), 1u) << text;
  // The host reference.
  const auto xs = contents<T>(args[0]), bs = contents<T>(args[1]), got = contents<T>(args[2]);
  for (std::int64_t i = 0; i < M; ++i) {
    std::vector<T> row;
    for (std::int64_t j = 0; j < N; ++j)
      row.push_back(static_cast<T>(static_cast<float>(xs[static_cast<std::size_t>(i * N + j)]) +
                                   static_cast<float>(bs[static_cast<std::size_t>(j)])));
    float mx = static_cast<float>(row[0]);
    for (T r : row) mx = std::max(mx, static_cast<float>(r));
    for (std::int64_t j = 0; j < N; ++j) {
      const T want = static_cast<T>(std::exp(static_cast<float>(static_cast<T>(static_cast<float>(row[static_cast<std::size_t>(j)]) - mx))));
      const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-2;
      ASSERT_NEAR(static_cast<float>(got[static_cast<std::size_t>(i * N + j)]), static_cast<float>(want), tolerance)
          << i << "," << j;
    }
  }
}
TEST(Broadcast, SoftmaxNumeratorFusesF32) { softmax_numerator_fuses<float>(); }
TEST(Broadcast, SoftmaxNumeratorFusesBf16) { softmax_numerator_fuses<bf16>(); }

}  // namespace
