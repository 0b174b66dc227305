// Compiled stages of fused loops (ir/primitives/detail/fused_stages.hpp): two
// or three f32 members run as one loop, with results bit-identical to the
// unfused graph for every op of the stage alphabet, in both operand orders,
// with scalar, stretched and loaded operands, tails shorter than a tile, and
// NaN, signed zeros and infinities; members that others also read, and
// bf16 / f64 groups, keep the one-op-at-a-time path.

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "support/graph_testing.hpp"
#include <refx/passes/pipeline.hpp>

using namespace refx;
using namespace refx::testing;
using namespace refx::graph_testing;

namespace {

std::vector<float> awkward(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  const float special[] = {0.0f,
                           -0.0f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           -std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::max()};
  // Different strides per seed: specials meet ordinary values and each other.
  for (std::size_t i = seed % 5; i < n; i += 7 + seed % 3) v[i] = special[(i / 7 + seed) % 8];
  return v;
}

// The stage alphabet's ops, chosen when the kernel is traced.
constexpr const char* op_names[] = {"add", "sub", "mul", "max", "min"};
template <class A, class B>
auto apply_op(int op, const A& a, const B& b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return max(a, b);
    default: return min(a, b);
  }
}

constexpr std::int64_t n = 1100;  // two full tiles and a tail

std::vector<Buffer> three_inputs_and_output() {
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{n}, awkward(n, 1)));
  args.push_back(make_buffer<float>(Shape{n}, awkward(n, 2)));
  args.push_back(make_buffer<float>(Shape{n}, awkward(n, 3)));
  args.emplace_back(DType::f32, Shape{n});
  return args;
}

TEST(FuseStages, EveryChainIsBitIdentical) {
  for (int o1 = 0; o1 < 5; ++o1)
    for (int o2 = 0; o2 < 5; ++o2)
      for (int right = 0; right < 2; ++right) {
        SCOPED_TRACE(fmt::format("{} into {} ({})", op_names[o1], op_names[o2], right ? "right" : "left"));
        const auto f = [&](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<const float, n> z,
                           VmemRef<float, n> out) {
          auto inner = apply_op(o1, x.load(), y.load());
          out.store(right ? apply_op(o2, z.load(), inner) : apply_op(o2, inner, z.load()));
        };
        auto args = three_inputs_and_output();
        const Graph g = fused_matches_unfused(f, args);
        EXPECT_EQ(live_ops(g, "fused"), 1u) << to_text(g);
      }
}

TEST(FuseStages, EveryTreeIsBitIdentical) {
  for (int o1 = 0; o1 < 5; ++o1)
    for (int o2 = 0; o2 < 5; ++o2)
      for (int o3 = 0; o3 < 5; ++o3) {
        SCOPED_TRACE(fmt::format("{}({}, {})", op_names[o3], op_names[o1], op_names[o2]));
        const auto f = [&](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<const float, n> z,
                           VmemRef<float, n> out) {
          out.store(apply_op(o3, apply_op(o1, x.load(), y.load()), apply_op(o2, z.load(), x.load())));
        };
        auto args = three_inputs_and_output();
        fused_matches_unfused(f, args);
      }
}

TEST(FuseStages, ScalarOperandsOnEitherSide) {
  for (int o1 = 0; o1 < 5; ++o1)
    for (int o2 = 0; o2 < 5; ++o2) {
      SCOPED_TRACE(fmt::format("{} and {}", op_names[o1], op_names[o2]));
      const auto f = [&](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<const float, n>,
                         VmemRef<float, n> out) {
        // A chain with the scalar on the left, a tree of two scalar ops, and a final scalar op.
        auto chain = apply_op(o2, -0.0f, apply_op(o1, x.load(), 1.5f));
        auto tree = apply_op(o1, apply_op(o2, y.load(), 0.0f), apply_op(o2, -2.0f, x.load()));
        out.store(apply_op(o1, chain * tree, std::numeric_limits<float>::infinity()));
      };
      auto args = three_inputs_and_output();
      fused_matches_unfused(f, args);
    }
}

TEST(FuseStages, StretchedBroadcastsAndAccumulation) {
  const auto f = [](VmemRef<const float, 24, 70> x, VmemRef<const float, 24, 1> m, VmemRef<const float, 1, 70> b,
                    VmemRef<float, 24, 70> out) { out += max((x.load() - m.load()) * 2.0f + b.load(), 0.0f); };
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{24, 70}, awkward(24 * 70, 4)));
  args.push_back(make_buffer<float>(Shape{24, 1}, awkward(24, 5)));
  args.push_back(make_buffer<float>(Shape{1, 70}, awkward(70, 6)));
  args.push_back(make_buffer<float>(Shape{24, 70}, awkward(24 * 70, 7)));
  const Graph g = fused_matches_unfused(f, args);
  EXPECT_NE(to_text(g).find("accum]"), std::string::npos) << to_text(g);
}

TEST(FuseStages, MembersReadTwiceOrBySelectStayTiles) {
  const auto f = [](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<const float, n> z,
                    VmemRef<float, n> out) {
    auto t = x.load() * 2.0f;  // read twice: its tile must exist
    auto u = y.load() - 1.0f;  // read by a select
    auto v = z.load() + 0.5f;  // read once, by the select's other branch
    out.store(select(x.load() > 0.0f, (t + y.load()) * t, max(u, v)) + u);
  };
  auto args = three_inputs_and_output();
  fused_matches_unfused(f, args);
}

TEST(FuseStages, ShortAndOddLengths) {
  const auto run = [](auto len) {
    constexpr std::int64_t k = decltype(len)::value;
    const auto f = [](VmemRef<const float, k> x, VmemRef<const float, k> y, VmemRef<float, k> out) {
      out.store(max(x.load() * 2.0f + y.load() * 3.0f, 0.0f));
    };
    std::vector<Buffer> args;
    args.push_back(make_buffer<float>(Shape{k}, awkward(k, 8)));
    args.push_back(make_buffer<float>(Shape{k}, awkward(k, 9)));
    args.emplace_back(DType::f32, Shape{k});
    fused_matches_unfused(f, args);
  };
  run(std::integral_constant<std::int64_t, 1>{});
  run(std::integral_constant<std::int64_t, 7>{});
  run(std::integral_constant<std::int64_t, 513>{});
}

TEST(FuseStages, Bf16AndF64GroupsKeepTheirRoundings) {
  constexpr std::int64_t m = 700;
  const auto f = [](VmemRef<const bf16, m> x, VmemRef<const bf16, m> y, VmemRef<bf16, m> out,
                    VmemRef<const double, m> a, VmemRef<double, m> b) {
    out.store(max(x.load() * bf16(1.5f) + y.load() * bf16(-3.0f), bf16(0.0f)));
    b.store(min(a.load() - 0.1, a.load() * 3.0));
  };
  std::vector<float> xs = awkward(m, 10), ys = awkward(m, 11);
  std::vector<bf16> xb, yb;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xb.push_back(bf16(xs[i] * 37.0f));
    yb.push_back(bf16(ys[i] * 0.013f));
  }
  std::vector<double> ad;
  for (float v : awkward(m, 12)) ad.push_back(double(v) * 1.0000001);
  std::vector<Buffer> args;
  args.push_back(make_buffer<bf16>(Shape{m}, xb));
  args.push_back(make_buffer<bf16>(Shape{m}, yb));
  args.emplace_back(DType::bf16, Shape{m});
  args.push_back(make_buffer<double>(Shape{m}, ad));
  args.emplace_back(DType::f64, Shape{m});
  fused_matches_unfused(f, args);
}

// The plan itself: which members are taken into their user's stage.
detail::FusedMember member(int op, int p0, int p1) {
  detail::FusedMember f{};
  f.inputs = 2;
  f.scalar_at = -1;
  f.stage_op = static_cast<std::int8_t>(op);
  f.producer = {static_cast<std::int8_t>(p0), static_cast<std::int8_t>(p1)};
  return f;
}

TEST(FuseStages, PlanTakesInOperandsReadOnceAndOnlyThose) {
  // max(add(mul(x, 2), mul(y, 3)), 0): the add takes in both muls (a
  // tree); the max, whose operand is a stage, runs alone: two passes.
  std::vector<detail::FusedMember> m{member(2, -1, -1), member(2, -1, -1), member(0, 0, 1), member(3, 2, -1)};
  for (auto& f : m)
    for (auto p : f.producer)
      if (p >= 0) ++m[static_cast<std::size_t>(p)].uses;
  detail::plan_stages(m);
  EXPECT_EQ(m[2].stage, detail::tree_stage_fn(2, 2, 0));
  EXPECT_TRUE(m[0].inlined);
  EXPECT_TRUE(m[1].inlined);
  EXPECT_FALSE(m[2].inlined);
  EXPECT_EQ(m[3].stage, nullptr);

  // sub(c, mul(a, b)) where the mul is also read by a third member: no stage.
  std::vector<detail::FusedMember> shared{member(2, -1, -1), member(1, -1, 0), member(0, 0, 1)};
  for (auto& f : shared)
    for (auto p : f.producer)
      if (p >= 0) ++shared[static_cast<std::size_t>(p)].uses;
  detail::plan_stages(shared);
  EXPECT_FALSE(shared[0].inlined);
  EXPECT_EQ(shared[2].stage, detail::chain_stage_fn(1, 0, true));  // add(mul(..), sub(c, t)): its right operand
  EXPECT_TRUE(shared[1].inlined);

  // An op outside the alphabet (stage_op -1) is neither a stage nor taken in.
  std::vector<detail::FusedMember> other{member(-1, -1, -1), member(0, 0, -1)};
  other[0].uses = 1;
  detail::plan_stages(other);
  EXPECT_FALSE(other[0].inlined);
  EXPECT_EQ(other[1].stage, nullptr);
}

}  // namespace
