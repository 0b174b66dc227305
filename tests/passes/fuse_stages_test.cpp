// Compiled stage programs of fused loops (ir/primitives/detail/
// fused_stages.hpp, fused_plan.hpp): trees of f32 add / sub / mul / max / min
// members run as one program, with results bit-identical to the unfused
// graph for every op of the stage alphabet, in both operand orders, with
// scalar (NaN and signed-zero ones too), stretched and loaded operands, tails
// shorter than a pass, and NaN, signed zeros and infinities; trees that need
// three registers spill a subtree to its tile; members that others also read,
// and bf16 / f64 groups, keep the one-op-at-a-time path.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "support/graph_testing.hpp"
#include <refx/passes/pipeline.hpp>

using namespace refx;
using namespace refx::testing;
using namespace refx::graph_testing;

namespace {

/// A static shape: its element count, Shape and VmemRef.
template <std::int64_t... E>
struct Dims {
  static constexpr std::int64_t size() { return (E * ...); }
  static Shape shape() { return Shape{E...}; }
  template <class T>
  using ref = VmemRef<T, E...>;
};

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

// Broadcasts whose pattern repeats within a tile (512 elements) fill their
// tile once: <1, 1, 64> (period 64) and <1, 128> (period 128), over 960 and
// 768 elements (a partial last tile); <1, 5, 64> (period 320) and <3, 1, 64>
// (no period) keep filling it per tile. All bit-identical to the unfused ops.
TEST(FuseStages, BroadcastsThatRepeatWithinATile) {
  const auto f = [](VmemRef<const float, 3, 5, 64> x, VmemRef<const float, 1, 1, 64> b,
                    VmemRef<const float, 1, 5, 64> c, VmemRef<const float, 3, 1, 64> d, VmemRef<float, 3, 5, 64> out) {
    out.store(((x.load() - b.load()) * 2.0f + c.load()) * d.load());
  };
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{3, 5, 64}, awkward(960, 10)));
  args.push_back(make_buffer<float>(Shape{1, 1, 64}, awkward(64, 11)));
  args.push_back(make_buffer<float>(Shape{1, 5, 64}, awkward(320, 12)));
  args.push_back(make_buffer<float>(Shape{3, 1, 64}, awkward(192, 13)));
  args.emplace_back(DType::f32, Shape{3, 5, 64});
  fused_matches_unfused(f, args);
  const auto row = [](VmemRef<const float, 6, 128> x, VmemRef<const float, 1, 128> r, VmemRef<float, 6, 128> out) {
    out.store(max(x.load() * r.load(), r.load() - 1.0f));
  };
  std::vector<Buffer> rows;
  rows.push_back(make_buffer<float>(Shape{6, 128}, awkward(768, 14)));
  rows.push_back(make_buffer<float>(Shape{1, 128}, awkward(128, 15)));
  rows.emplace_back(DType::f32, Shape{6, 128});
  fused_matches_unfused(row, rows);
  // Each element met its own column of r (the host's x - r, NaN for NaN).
  const auto diff = [](VmemRef<const float, 6, 128> x, VmemRef<const float, 1, 128> r, VmemRef<float, 6, 128> out) {
    out.store(x.load() - r.load());
  };
  fused_matches_unfused(diff, rows);
  const std::vector<float> x = contents<float>(rows[0]), r = contents<float>(rows[1]), got = contents<float>(rows[2]);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float want = x[i] - r[i % 128];
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got[i])) << i;
    else EXPECT_EQ(got[i], want) << i;
  }
}

// A <R, 1> column: stage programs hold each row's value in a register for
// rows of at least fused_row_min elements; shorter rows, and a column that
// a select also reads, fill their tiles run by run. Rows shorter than a
// tile, not dividing it, longer than it, of rank-3 loops, across tiles;
// two columns, NaN in some rows (max and min keep their NaN rules):
// bit-identical to the unfused ops, and each element met its own row's
// value.
TEST(FuseStages, ColumnsTakeEachRowsValueInARegister) {
  const auto run = [](auto x_shape, auto col_shape) {
    using XS = decltype(x_shape);
    using CS = decltype(col_shape);
    constexpr std::int64_t n = XS::size(), rows = CS::size();
    const auto f = [](typename XS::template ref<const float> x, typename CS::template ref<const float> m,
                      typename CS::template ref<const float> s, typename XS::template ref<float> out) {
      out.store(max((x.load() - m.load()) * s.load(), m.load()) + min(x.load(), s.load()) +
                select(x.load() > 1.0f, x.load(), s.load()));
    };
    std::vector<Buffer> args;
    args.push_back(make_buffer<float>(XS::shape(), awkward(n, 31)));
    args.push_back(make_buffer<float>(CS::shape(), awkward(rows, 32)));
    args.push_back(make_buffer<float>(CS::shape(), awkward(rows, 33)));
    args.emplace_back(DType::f32, XS::shape());
    fused_matches_unfused(f, args);
    const auto diff = [](typename XS::template ref<const float> x, typename CS::template ref<const float> m,
                         typename CS::template ref<const float>, typename XS::template ref<float> out) {
      out.store((x.load() - m.load()) * 2.0f);
    };
    fused_matches_unfused(diff, args);
    const std::vector<float> x = contents<float>(args[0]), m = contents<float>(args[1]), got = contents<float>(args[3]);
    for (std::int64_t i = 0; i < n; ++i) {
      const float want = (x[static_cast<std::size_t>(i)] - m[static_cast<std::size_t>(i / (n / rows))]) * 2.0f;
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(got[static_cast<std::size_t>(i)])) << i;
      else EXPECT_EQ(got[static_cast<std::size_t>(i)], want) << i;
    }
  };
  run(Dims<12, 64>{}, Dims<12, 1>{});
  run(Dims<7, 100>{}, Dims<7, 1>{});
  run(Dims<3, 1024>{}, Dims<3, 1>{});
  run(Dims<2, 3, 64>{}, Dims<2, 3, 1>{});
  run(Dims<4, 2, 80>{}, Dims<4, 1, 1>{});
  run(Dims<40, 16>{}, Dims<40, 1>{});
  run(Dims<8, 256>{}, Dims<8, 1>{});
  run(Dims<4, 2, 160>{}, Dims<4, 1, 1>{});
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

// Groups of four and more members, as epilogues write them: each runs as one
// program (the planner's tests below), bit-identical to the unfused graph.
TEST(FuseStages, WholeEpiloguesAreBitIdentical) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int o4 = 0; o4 < 5; ++o4)
    for (const float c : {0.0f, -0.0f, nan, -nan, 1.5f}) {
      SCOPED_TRACE(fmt::format("{}(x*2 + y*3, {})", op_names[o4], c));
      // The benchmark's shape, O4(add(mul(x, s), mul(y, s)), s), and its mirror.
      const auto f = [&](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<const float, n> z,
                         VmemRef<float, n> out) {
        out.store(apply_op(o4, x.load() * 2.0f + y.load() * -3.0f, c) + apply_op(o4, c, z.load() - x.load() * c));
      };
      auto args = three_inputs_and_output();
      fused_matches_unfused(f, args);
    }
  // Clamps, scale and bias, a*x + b*y, with NaN and signed-zero bounds.
  for (const float lo : {0.0f, -0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
    SCOPED_TRACE(fmt::format("clamp from {}", lo));
    const auto f = [&](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<const float, n> z,
                       VmemRef<float, n> out) {
      auto clamped = min(max(x.load() * 0.75f + 0.25f, lo), 1.0f);
      out.store(max(lo, clamped * y.load() - z.load() * 0.5f));
    };
    auto args = three_inputs_and_output();
    fused_matches_unfused(f, args);
  }
}

TEST(FuseStages, TreesNeedingThreeRegistersAndLongChains) {
  const auto f = [](VmemRef<const float, n> x, VmemRef<const float, n> y, VmemRef<const float, n> z,
                    VmemRef<float, n> out) {
    auto a = x.load(), b = y.load(), c = z.load();
    // (a*b + c*a) * (b*c - a*b): both operands need two registers.
    auto wide = (a * b + c * a) * (b * c - a * b);
    // min(..., max(...)) where the right operand needs two registers, the left one.
    auto mixed = min(a - 1.0f, max(b * c, c + a));
    auto chain = ((((a + 1.0f) * b - c) * 0.5f + a) - b) * c;
    out.store(max(wide + mixed, chain));
  };
  auto args = three_inputs_and_output();
  fused_matches_unfused(f, args);
}

// The plan itself: which members are taken into their user's program, and
// the steps of each program.
detail::FusedMember member(int op, int p0, int p1) {
  detail::FusedMember f{};
  f.inputs = 2;
  f.scalar_at = -1;
  f.stage_op = static_cast<std::int8_t>(op);
  f.producer = {static_cast<std::int8_t>(p0), static_cast<std::int8_t>(p1)};
  return f;
}

struct Planned {
  std::vector<detail::FusedMember> m;
  std::vector<detail::StageStep> steps;
  std::size_t count;
};
Planned plan(std::vector<detail::FusedMember> m) {
  for (auto& f : m)
    for (auto p : f.producer)
      if (p >= 0) ++m[static_cast<std::size_t>(p)].uses;
  std::vector<detail::StageStep> steps(2 * m.size());
  std::vector<detail::StageOrigin> origins(2 * m.size());
  const std::size_t count = detail::plan_programs(m, steps, origins);
  return {std::move(m), std::move(steps), count};
}

// The step functions of the program of member `root`.
std::vector<detail::StageStepFn> program_of(const Planned& p, std::size_t root) {
  std::vector<detail::StageStepFn> fns;
  const detail::FusedMember& f = p.m[root];
  for (std::int32_t k = f.program; k >= 0 && k < f.program + f.program_steps; ++k)
    fns.push_back(p.steps[static_cast<std::size_t>(k)].fn);
  return fns;
}

using detail::stage_step_fn;
using detail::StageDst;
using detail::StageForm;
using detail::StageLeaf;
using detail::StageOp;

TEST(FuseStages, PlanRunsATreeAndItsUserAsOneProgram) {
  // max(add(mul(x, 2), mul(y, 3)), 0): one program of four steps, the max
  // storing the result.
  const Planned p = plan({member(2, -1, -1), member(2, -1, -1), member(0, 0, 1), member(3, 2, -1)});
  EXPECT_EQ(p.count, 4u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_TRUE(p.m[k].inlined) << k;
  EXPECT_EQ(p.m[3].program, 0);
  const std::vector<detail::StageStepFn> expected{stage_step_fn(StageOp::mul, StageForm::leaves, StageDst::acc),
                                                  stage_step_fn(StageOp::mul, StageForm::leaves, StageDst::tmp),
                                                  stage_step_fn(StageOp::add, StageForm::acc_left, StageDst::acc),
                                                  stage_step_fn(StageOp::max, StageForm::reg_left, StageDst::out)};
  EXPECT_EQ(program_of(p, 3), expected);
  for (const auto fn : expected) EXPECT_NE(fn, nullptr);
  EXPECT_EQ(p.m[3].run, detail::stage_run_fn(StageOp::mul, StageDst::acc, StageLeaf::stream, StageLeaf::stream));
}

TEST(FuseStages, PlanScalarOperandsAreRegisters) {
  // max(mul(x, 2), 0) with both scalars as such: the max by a scalar that is
  // not NaN is max_num; by a NaN scalar, max.
  const float two = 2.0f, zero = 0.0f, nan = std::numeric_limits<float>::quiet_NaN();
  for (const float* c : {&zero, &nan}) {
    std::vector<detail::FusedMember> m{member(2, -1, -1), member(3, 0, -1)};
    m[0].scalar[1] = &two;
    m[1].scalar[1] = c;
    const Planned p = plan(std::move(m));
    const std::vector<detail::StageStepFn> expected{
        stage_step_fn(StageOp::mul, StageForm::leaves, StageDst::acc, StageLeaf::stream, StageLeaf::scalar),
        stage_step_fn(std::isnan(*c) ? StageOp::max : StageOp::max_num, StageForm::reg_left, StageDst::out,
                      StageLeaf::scalar)};
    EXPECT_EQ(program_of(p, 1), expected);
    EXPECT_EQ(p.steps[0].sy[0], 2.0f);
  }
}

TEST(FuseStages, PlanTakesInOperandsReadOnceAndOnlyThose) {
  // sub(c, mul(a, b)) where the mul is also read by a third member: the mul
  // is a program of its own; the add takes in the sub, its right operand.
  const Planned shared = plan({member(2, -1, -1), member(1, -1, 0), member(0, 0, 1)});
  EXPECT_FALSE(shared.m[0].inlined);
  EXPECT_TRUE(shared.m[1].inlined);
  EXPECT_EQ(program_of(shared, 0).size(), 1u);
  const std::vector<detail::StageStepFn> expected{stage_step_fn(StageOp::sub, StageForm::leaves, StageDst::acc),
                                                  stage_step_fn(StageOp::add, StageForm::reg_right, StageDst::out)};
  EXPECT_EQ(program_of(shared, 2), expected);

  // An op outside the alphabet (stage_op -1) is neither a program nor taken in.
  const Planned other = plan({member(-1, -1, -1), member(0, 0, -1)});
  EXPECT_FALSE(other.m[0].inlined);
  EXPECT_EQ(other.m[0].program, -1);
  EXPECT_EQ(program_of(other, 1).size(), 1u);
}

TEST(FuseStages, PlanSpillsWhereATreeNeedsThreeRegisters) {
  // mul(add(mul, mul), add(mul, mul)): the right add is a program of its own.
  const Planned p = plan({member(2, -1, -1), member(2, -1, -1), member(0, 0, 1), member(2, -1, -1), member(2, -1, -1),
                          member(0, 3, 4), member(2, 2, 5)});
  EXPECT_FALSE(p.m[5].inlined);
  EXPECT_TRUE(p.m[2].inlined);
  EXPECT_EQ(program_of(p, 5).size(), 3u);
  ASSERT_EQ(program_of(p, 6).size(), 4u);
  EXPECT_EQ(program_of(p, 6)[3], stage_step_fn(StageOp::mul, StageForm::reg_left, StageDst::out));

  // sub(mul, add(mul, mul)): the right operand needs two registers, so it is
  // computed first, into acc, and the mul into tmp: acc = sub(tmp, acc).
  const Planned q = plan({member(2, -1, -1), member(2, -1, -1), member(2, -1, -1), member(0, 1, 2), member(1, 0, 3)});
  const std::vector<detail::StageStepFn> expected{stage_step_fn(StageOp::mul, StageForm::leaves, StageDst::acc),
                                                  stage_step_fn(StageOp::mul, StageForm::leaves, StageDst::tmp),
                                                  stage_step_fn(StageOp::add, StageForm::acc_left, StageDst::acc),
                                                  stage_step_fn(StageOp::mul, StageForm::leaves, StageDst::tmp),
                                                  stage_step_fn(StageOp::sub, StageForm::acc_right, StageDst::out)};
  EXPECT_EQ(program_of(q, 4), expected);
}

}  // namespace
