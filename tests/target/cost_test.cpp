// passes/cost.hpp: one op's estimate from a Target's figures, against
// closed forms and the worked figures the JAX scaling book publishes
// (docs/targets.md, "Cost of one op").

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <refx/passes/cost.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;

/// The estimates of every op of `g` whose unit is `unit`.
std::vector<OpCost> costs(const Graph& g, const Target& t, OpCost::Unit unit) {
  std::vector<OpCost> out;
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const OpCost c = passes::op_cost(g, static_cast<OpId>(o), t);
    if (c.unit == unit) out.push_back(c);
  }
  return out;
}

// Scaling book, "How to Think About TPUs", question 4: int8[B, 4096] x
// int8[4096, 16384] on one v5e takes T_math = 1.3e8 B / 3.94e14 s, and
// loading the weights from HBM 6.7e7 / 8.1e11 s (the book's rounded figures).
TEST(OpCost, MatmulAndWeightLoadMatchTheScalingBooksV5eExample) {
  constexpr std::int64_t B = 512, D = 4096, F = 16384;
  const auto k = [](HbmRef<const std::int8_t, D, F> w_hbm, VmemRef<const std::int8_t, B, D> x,
                    VmemRef<std::int32_t, B, F> y) {
    run_scoped([&](VmemRef<std::int8_t, D, F> w) {
      sync_copy(w_hbm, w);
      y.store(dot<std::int32_t>(x.load(), w.load()));
    });
  };
  const Graph g = trace(k);
  const auto matrix = costs(g, targets::v5e(), OpCost::Unit::matrix);
  ASSERT_EQ(matrix.size(), 1u);
  const double book_math = 1.3e8 * B / 3.94e14;
  EXPECT_NEAR(matrix[0].seconds / book_math, 1.0, 0.05);
  const auto hbm = costs(g, targets::v5e(), OpCost::Unit::hbm);
  ASSERT_EQ(hbm.size(), 1u);
  EXPECT_EQ(hbm[0].work, double(D * F));
  EXPECT_NEAR(hbm[0].seconds / (6.7e7 / 8.1e11), 1.0, 0.05);
}

// A shape smaller than the matrix unit costs as much as the padded one:
// 8 x 128 x 128 on v6e's 256 x 256 unit is a quarter efficient.
TEST(OpCost, SmallMatmulsArePaddedToTheMatrixUnit) {
  const auto k = [](VmemRef<const bf16, 8, 128> a, VmemRef<const bf16, 128, 128> b, VmemRef<float, 8, 128> c) {
    c.store(dot<float>(a.load(), b.load()));
  };
  const Graph g = trace(k);
  const OpCost v6e = costs(g, targets::v6e(), OpCost::Unit::matrix).at(0);
  EXPECT_EQ(v6e.work, 2.0 * 8 * 128 * 128);
  EXPECT_DOUBLE_EQ(v6e.seconds, 2.0 * 8 * 256 * 256 / 918e12);
  const OpCost v5e = costs(g, targets::v5e(), OpCost::Unit::matrix).at(0);  // 128 x 128: no padding
  EXPECT_DOUBLE_EQ(v5e.seconds, v5e.work / 197e12);
  // f32 operands: supported, but no published peak.
  const auto f32 = [](VmemRef<const float, 8, 128> a, VmemRef<const float, 128, 128> b, VmemRef<float, 8, 128> c) {
    c.store(dot(a.load(), b.load()));
  };
  EXPECT_FALSE(costs(trace(f32), targets::v5e(), OpCost::Unit::matrix).at(0).known);
}

TEST(OpCost, VectorOpsNeedAVectorRate) {
  const auto k = [](VmemRef<const float, 8, 128> x, VmemRef<float, 8> y) { y.store(reduce_sum<1>(x.load() * 2.0f)); };
  const Graph g = trace(k);
  const auto unknown = costs(g, targets::v5e(), OpCost::Unit::vector);
  ASSERT_EQ(unknown.size(), 2u);  // the product and the sum, each over 1024 elements
  EXPECT_FALSE(unknown[0].known);
  Target t = targets::v5e();
  t.vector_ops_per_second = 1e12;
  for (const OpCost& c : costs(g, t, OpCost::Unit::vector)) {
    EXPECT_EQ(c.work, 1024.0);
    EXPECT_DOUBLE_EQ(c.seconds, 1024.0 / 1e12);
  }
}

// Scaling book, question 5: on a v5e 4x4 slice (no wraparound: the axes are
// shorter than 16) chip (0, 0) to (3, 3) is 6 hops, 6 us at the book's 1 us each; on
// the full 16x16 pod the wraparound makes (0, 0) to (15, 15) 2 hops.
TEST(OpCost, TorusHopsAndLatency) {
  const Target& t = targets::v5e();
  const std::array<std::int32_t, 2> small{4, 4}, pod{16, 16}, origin{0, 0}, far{3, 3}, corner{15, 15};
  EXPECT_EQ(passes::torus_hops(t, small, origin, far), 6);
  EXPECT_EQ(passes::torus_hops(t, pod, origin, corner), 2);
  EXPECT_EQ(passes::torus_hops(t, pod, origin, far), 6);
  EXPECT_NEAR(passes::ici_transfer_seconds(t, 0, 6), 6e-6, 1e-12);
  // One link one way: the book's working 4.5e10 B/s on v5e (its peak is 5e10).
  EXPECT_DOUBLE_EQ(passes::ici_transfer_seconds(t, 4.5e10, 0), 1.0);
  // v5p's 4x4x4 cube has its wraparound links: (0,0,0) to (3,3,3) is 3 hops.
  const std::array<std::int32_t, 3> cube{4, 4, 4}, o3{0, 0, 0}, f3{3, 3, 3};
  EXPECT_EQ(passes::torus_hops(targets::v5p(), cube, o3, f3), 3);
  EXPECT_THROW(passes::torus_hops(t, small, o3, f3), ArgumentError);
  const std::array<std::int32_t, 2> outside{4, 0};
  EXPECT_THROW(passes::torus_hops(t, small, origin, outside), ArgumentError);
}

TEST(OpCost, RemoteCopiesCostOneHopOfTheirBytes) {
  const auto k = [](HbmRef<const float, 1024, 256> x, HbmRef<float, 1024, 256> y) {
    const auto right = (axis_index("x") + 1) % axis_size("x");
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, right);
      c.start();
      c.wait();
    });
  };
  const Mesh mesh{{"x", 4}};
  const Graph g = kernel(k).compile(mesh).graph();
  const auto ici = costs(g, targets::v5p(), OpCost::Unit::ici);
  ASSERT_EQ(ici.size(), 1u);
  EXPECT_EQ(ici[0].work, 1024.0 * 256 * 4);
  EXPECT_DOUBLE_EQ(ici[0].seconds, ici[0].work / 90e9);  // v5p: 9e10 B/s one way per link, working
}

}  // namespace
