// Traced control flow (fori_loop, when), trace-time unrolling of plain C++
// loops, and scoped state (run_state, run_scoped), run by the interpreter.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>

#include "support/testing.hpp"

using namespace refx;
using namespace refx::testing;

namespace {

using I32 = std::int32_t;
using I64 = std::int64_t;

// ---------------------------------------------------------------- fori_loop

TEST(ForiLoop, WithoutCarryWritesEachIteration) {
  Graph g = trace([](VmemRef<float, 8> y) {
    fori_loop(0, 8, [&](Scalar<I32> i) { y.at(i).store(cast<float>(i) * 10.0f + 1.0f); });
  });
  Buffer by = filled<float>(Shape{8}, -1.0f);
  interpret(g, by);
  std::vector<float> want;
  for (int i = 0; i < 8; ++i) want.push_back(static_cast<float>(i) * 10.0f + 1.0f);
  EXPECT_TRUE(elements_match(contents<float>(by), want));
}

TEST(ForiLoop, NonZeroAndNegativeLowerBound) {
  // i runs over [lo, hi): y[i - lo] = i * i - i.
  Graph g = trace([](VmemRef<I32, 5> a, VmemRef<I32, 4> b) {
    fori_loop(3, 8, [&](Scalar<I32> i) { a.at(i - 3).store(i * i - i); });
    fori_loop(-2, 2, [&](Scalar<I32> i) { b.at(i + 2).store(i * 3); });
  });
  Buffer ba = filled<I32>(Shape{5}, 0), bb = filled<I32>(Shape{4}, 0);
  interpret(g, ba, bb);
  std::vector<I32> wa, wb;
  for (I32 i = 3; i < 8; ++i) wa.push_back(i * i - i);
  for (I32 i = -2; i < 2; ++i) wb.push_back(i * 3);
  EXPECT_EQ(contents<I32>(ba), wa);
  EXPECT_EQ(contents<I32>(bb), wb);
}

TEST(ForiLoop, SingleScalarCarry) {
  Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float> sum, VmemRef<float> prod) {
    Scalar<float> s = fori_loop(0, 8, [&](Scalar<I32> i, Scalar<float> acc) { return acc + x.at(i).load(); }, Scalar<float>(0.0f));
    Scalar<float> p = fori_loop(
        2, 5, [&](Scalar<I32> i, Scalar<float> acc) { return acc * x.at(i).load(); }, Scalar<float>(1.0f));
    sum.store(s);
    prod.store(p);
  });
  Buffer bx = make_buffer_fn<float>(Shape{8}, [](std::int64_t i) { return i + 1; }), bs(DType::f32, Shape{}), bp(DType::f32, Shape{});
  interpret(g, bx, bs, bp);
  EXPECT_EQ(contents<float>(bs)[0], 36.0f);      // 1 + ... + 8
  EXPECT_EQ(contents<float>(bp)[0], 3.0f * 4 * 5);  // x[2] * x[3] * x[4]
}

TEST(ForiLoop, ArrayCarry) {
  // Column sums of a (5, 4) matrix with a rank-1 carry.
  Graph g = trace([](VmemRef<const I64, 5, 4> x, VmemRef<I64, 4> y) {
    auto total = fori_loop(
        0, 5, [&](Scalar<I32> i, Value<I64, extents<4>> acc) { return acc + x.at(i).load(); }, zeros<I64, 4>());
    static_assert(std::is_same_v<decltype(total), Value<I64, extents<4>>>);
    y.store(total);
  });
  Buffer bx = make_buffer_fn<I64>(Shape{5, 4}, [](std::int64_t i) { return i * i - 7; }), by(DType::i64, Shape{4});
  interpret(g, bx, by);
  std::vector<I64> want(4, 0);
  for (I64 r = 0; r < 5; ++r)
    for (I64 c = 0; c < 4; ++c) want[static_cast<std::size_t>(c)] += (r * 4 + c) * (r * 4 + c) - 7;
  EXPECT_EQ(contents<I64>(by), want);
}

TEST(ForiLoop, TupleCarryFibonacci) {
  Graph g = trace([](VmemRef<I64> fa, VmemRef<I64> fb) {
    using C = std::tuple<Scalar<I64>, Scalar<I64>>;
    auto [a, b] = fori_loop(
        0, 50,
        [](Scalar<I32>, C c) {
          auto [x, y] = c;
          return C{y, x + y};
        },
        C{Scalar<I64>(0), Scalar<I64>(1)});
    fa.store(a);
    fb.store(b);
  });
  Buffer ba(DType::i64, Shape{}), bb(DType::i64, Shape{});
  interpret(g, ba, bb);
  I64 x = 0, y = 1;
  for (int i = 0; i < 50; ++i) {
    const I64 t = x + y;
    x = y;
    y = t;
  }
  EXPECT_EQ(contents<I64>(ba)[0], x);
  EXPECT_EQ(contents<I64>(bb)[0], y);
  EXPECT_EQ(contents<I64>(ba)[0], 12586269025);  // F(50), by hand
}

TEST(ForiLoop, TupleCarryOfMixedTypesAndPermutation) {
  // Carries are swapped every iteration: the evaluator must not clobber one
  // with the other. Also a float and an int carry side by side.
  Graph g = trace([](VmemRef<I32> a, VmemRef<I32> b, VmemRef<float> f) {
    using C = std::tuple<Scalar<I32>, Scalar<I32>, Scalar<float>>;
    auto [x, y, h] = fori_loop(
        0, 5,
        [](Scalar<I32> i, C c) {
          auto [p, q, r] = c;
          return C{q, p + i, r * 0.5f};
        },
        C{Scalar<I32>(1), Scalar<I32>(100), Scalar<float>(64.0f)});
    a.store(x);
    b.store(y);
    f.store(h);
  });
  Buffer ba(DType::i32, Shape{}), bb(DType::i32, Shape{}), bf(DType::f32, Shape{});
  interpret(g, ba, bb, bf);
  I32 p = 1, q = 100;
  float r = 64.0f;
  for (I32 i = 0; i < 5; ++i) {
    const I32 np = q, nq = p + i;
    p = np;
    q = nq;
    r *= 0.5f;
  }
  EXPECT_EQ(contents<I32>(ba)[0], p);
  EXPECT_EQ(contents<I32>(bb)[0], q);
  EXPECT_EQ(contents<float>(bf)[0], 2.0f);
}

TEST(ForiLoop, CarryReturnedUnchangedSwappedOrFromOutside) {
  Graph g = trace([](VmemRef<const I32> k, VmemRef<I32> same, VmemRef<I32> p, VmemRef<I32> q, VmemRef<I32> outer) {
    same.store(fori_loop(0, 5, [](Scalar<I32>, Scalar<I32> c) { return c; }, Scalar<I32>(42)));
    using C = std::tuple<Scalar<I32>, Scalar<I32>>;
    auto [a, b] = fori_loop(
        0, 3,
        [](Scalar<I32>, C c) {
          auto [x, y] = c;
          return C{y, x};  // a pure swap of the body's parameters
        },
        C{Scalar<I32>(1), Scalar<I32>(2)});
    p.store(a);
    q.store(b);
    auto kv = k.load();
    outer.store(fori_loop(0, 2, [&](Scalar<I32>, Scalar<I32>) { return kv; }, Scalar<I32>(0)));
  });
  Buffer bk = Buffer::scalar<I32>(9), bs(DType::i32, Shape{}), bp(DType::i32, Shape{}), bq(DType::i32, Shape{}), bo(DType::i32, Shape{});
  interpret(g, bk, bs, bp, bq, bo);
  EXPECT_EQ(contents<I32>(bs)[0], 42);
  EXPECT_EQ(contents<I32>(bp)[0], 2);  // three swaps
  EXPECT_EQ(contents<I32>(bq)[0], 1);
  EXPECT_EQ(contents<I32>(bo)[0], 9);
}

TEST(ForiLoop, ZeroIterations) {
  Graph g = trace([](VmemRef<float, 4> y, VmemRef<float> c, VmemRef<float> d) {
    fori_loop(5, 5, [&](Scalar<I32> i) { y.at(i - 5).store(99.0f); });
    fori_loop(3, 1, [&](Scalar<I32>) { y.store(99.0f); });  // hi < lo: no iterations either
    c.store(fori_loop(4, 4, [](Scalar<I32>, Scalar<float> a) { return a + 1.0f; }, Scalar<float>(7.0f)));
    d.store(fori_loop(9, 0, [](Scalar<I32>, Scalar<float> a) { return a * 0.0f; }, Scalar<float>(3.5f)));
  });
  Buffer by = make_buffer<float>(Shape{4}, {1, 2, 3, 4}), bc(DType::f32, Shape{}), bd(DType::f32, Shape{});
  interpret(g, by, bc, bd);
  EXPECT_EQ(contents<float>(by), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(contents<float>(bc)[0], 7.0f);
  EXPECT_EQ(contents<float>(bd)[0], 3.5f);
}

TEST(ForiLoop, OneIteration) {
  Graph g = trace([](VmemRef<I32> c) { c.store(fori_loop(6, 7, [](Scalar<I32> i, Scalar<I32> a) { return a * 10 + i; }, Scalar<I32>(4))); });
  Buffer bc(DType::i32, Shape{});
  interpret(g, bc);
  EXPECT_EQ(contents<I32>(bc)[0], 46);
}

TEST(ForiLoop, NestedLoops) {
  Graph g = trace([](VmemRef<I32, 3, 4> y, VmemRef<I32> pairs) {
    fori_loop(0, 3, [&](Scalar<I32> i) {
      fori_loop(0, 4, [&](Scalar<I32> j) { y.at(i, j).store(i * 10 + j); });
    });
    // Count pairs (i, j) with i < j < 6 using nested carries.
    pairs.store(fori_loop(
        0, 6,
        [](Scalar<I32> i, Scalar<I32> acc) {
          return fori_loop(i + 1, 6, [](Scalar<I32>, Scalar<I32> a) { return a + 1; }, acc);
        },
        Scalar<I32>(0)));
  });
  Buffer by = filled<I32>(Shape{3, 4}, -1), bp(DType::i32, Shape{});
  interpret(g, by, bp);
  std::vector<I32> want;
  for (I32 i = 0; i < 3; ++i)
    for (I32 j = 0; j < 4; ++j) want.push_back(i * 10 + j);
  EXPECT_EQ(contents<I32>(by), want);
  EXPECT_EQ(contents<I32>(bp)[0], 15);  // 6 choose 2
}

TEST(ForiLoop, TracedBounds) {
  // The bounds come from memory: one graph runs different trip counts.
  Graph g = trace([](SmemRef<const I32> lo, SmemRef<const I32> hi, VmemRef<float, 8> y, VmemRef<I32> n) {
    fori_loop(lo.load(), hi.load(), [&](Scalar<I32> i) { y.at(i) += 1.0f; });
    n.store(fori_loop(lo.load(), hi.load(), [](Scalar<I32>, Scalar<I32> c) { return c + 1; }, Scalar<I32>(0)));
  });
  struct Case {
    I32 lo, hi;
  };
  for (Case c : {Case{0, 8}, Case{2, 5}, Case{4, 4}, Case{6, 3}, Case{7, 8}}) {
    Buffer blo = Buffer::scalar<I32>(c.lo), bhi = Buffer::scalar<I32>(c.hi), by = filled<float>(Shape{8}, 0.0f), bn(DType::i32, Shape{});
    interpret(g, blo, bhi, by, bn);
    std::vector<float> want(8, 0.0f);
    for (I32 i = c.lo; i < c.hi; ++i) want[static_cast<std::size_t>(i)] = 1.0f;
    EXPECT_EQ(contents<float>(by), want) << c.lo << ".." << c.hi;
    EXPECT_EQ(contents<I32>(bn)[0], std::max(0, c.hi - c.lo)) << c.lo << ".." << c.hi;
  }
}

TEST(ForiLoop, BodyUsesValuesFromTheEnclosingBlock) {
  Graph g = trace([](VmemRef<const float> k, VmemRef<float, 4> y) {
    Scalar<float> scale = k.load() * 2.0f;
    fori_loop(0, 4, [&](Scalar<I32> i) { y.at(i).store(cast<float>(i) * scale); });
  });
  Buffer bk = Buffer::scalar<float>(1.5f), by(DType::f32, Shape{4});
  interpret(g, bk, by);
  EXPECT_TRUE(elements_match(contents<float>(by), std::vector<float>{0, 3, 6, 9}));
}

TEST(ForiLoop, PrefixSumWithCarryAndWrites) {
  Graph g = trace([](VmemRef<const I32, 6> x, VmemRef<I32, 6> y) {
    (void)fori_loop(
        0, 6,
        [&](Scalar<I32> i, Scalar<I32> acc) {
          auto next = acc + x.at(i).load();
          y.at(i).store(next);
          return next;
        },
        Scalar<I32>(0));
  });
  const std::vector<I32> xs{3, -1, 4, 1, -5, 9};
  Buffer bx = make_buffer<I32>(Shape{6}, xs), by(DType::i32, Shape{6});
  interpret(g, bx, by);
  std::vector<I32> want;
  I32 acc = 0;
  for (I32 v : xs) want.push_back(acc += v);
  EXPECT_EQ(contents<I32>(by), want);
}

// ---------------------------------------------------------------- when

TEST(When, TrueAndFalseFromATracedComparison) {
  Graph g = trace([](SmemRef<const I32> flag, VmemRef<float, 2> y) {
    auto f = flag.load();
    when(f > 0, [&] { y.at(0).store(1.0f); });
    when(f <= 0, [&] { y.at(1).store(2.0f); });
  });
  for (I32 flag : {1, 0, -3, 5}) {
    Buffer bf = Buffer::scalar<I32>(flag), by = filled<float>(Shape{2}, 0.0f);
    interpret(g, bf, by);
    const std::vector<float> want = flag > 0 ? std::vector<float>{1.0f, 0.0f} : std::vector<float>{0.0f, 2.0f};
    EXPECT_EQ(contents<float>(by), want) << "flag " << flag;
  }
}

TEST(When, InsideALoopAndNested) {
  // Even i: y[i] = i; multiples of 4 additionally add 100.
  Graph g = trace([](VmemRef<I32, 8> y) {
    fori_loop(0, 8, [&](Scalar<I32> i) {
      when(i % 2 == 0, [&] {
        y.at(i).store(i);
        when(i % 4 == 0, [&] { y.at(i) += 100; });
      });
    });
  });
  Buffer by = filled<I32>(Shape{8}, -1);
  interpret(g, by);
  std::vector<I32> want(8, -1);
  for (I32 i = 0; i < 8; ++i) {
    if (i % 2 == 0) want[static_cast<std::size_t>(i)] = i;
    if (i % 4 == 0) want[static_cast<std::size_t>(i)] += 100;
  }
  EXPECT_EQ(contents<I32>(by), want);
}

TEST(When, ConditionFromBoolRefAndLogic) {
  Graph g = trace([](VmemRef<const bool, 2> c, VmemRef<I32, 4> y) {
    auto a = c.at(0).load(), b = c.at(1).load();
    when(a & b, [&] { y.at(0).store(1); });
    when(a | b, [&] { y.at(1).store(1); });
    when(!a, [&] { y.at(2).store(1); });
    when(a != b, [&] { y.at(3).store(1); });
  });
  for (int m = 0; m < 4; ++m) {
    const bool a = m & 1, b = m & 2;
    Buffer bc = make_buffer<bool>(Shape{2}, {a, b}), by = filled<I32>(Shape{4}, 0);
    interpret(g, bc, by);
    const std::vector<I32> want{a && b, a || b, !a, a != b};
    EXPECT_EQ(contents<I32>(by), want) << a << b;
  }
}

// ---------------------------------------------------------------- cond, switch_

TEST(Cond, ReturnsTheTakenBranchsValue) {
  // y = x > 0 ? x * 2 : -x (lax.cond with one result).
  Graph g = trace([](SmemRef<const I32> x, SmemRef<I32> y) {
    const auto v = x.load();
    y.store(cond(v > 0, [&] { return v * 2; }, [&] { return -v; }));
  });
  for (I32 x : {5, 0, -7}) {
    Buffer bx = Buffer::scalar<I32>(x), by = Buffer::scalar<I32>(-99);
    interpret(g, bx, by);
    EXPECT_EQ(contents<I32>(by)[0], x > 0 ? x * 2 : -x) << "x " << x;
  }
}

TEST(Cond, TupleResultsArraysAndNesting) {
  // Paged attention's compute_block_indices: nested conds returning a tuple.
  Graph g = trace([](SmemRef<const I32, 3> in, VmemRef<float, 4> row, SmemRef<I32, 3> out, VmemRef<float, 4> r) {
    const auto b = in.at(0).load(), h = in.at(1).load(), i = in.at(2).load();
    using T = std::tuple<Scalar<I32>, Scalar<I32>, Scalar<I32>>;
    const auto advance_h = [&] {
      return cond(
          h + 1 < 4, [&] { return T{b, h + 1, Scalar<I32>(0)}; }, [&] { return T{b + 1, Scalar<I32>(0), Scalar<I32>(0)}; });
    };
    const auto [nb, nh, ni] = cond(i < 2, [&] { return T{b, h, i}; }, advance_h);
    out.at(0).store(nb);
    out.at(1).store(nh);
    out.at(2).store(ni);
    // An array result: the row doubled or negated.
    r.store(cond(b == 0, [&] { return row.load() * 2.0f; }, [&] { return -row.load(); }));
  });
  struct Case {
    I32 b, h, i, nb, nh, ni;
  };
  for (const Case c : {Case{0, 1, 1, 0, 1, 1}, Case{0, 1, 2, 0, 2, 0}, Case{2, 3, 5, 3, 0, 0}}) {
    Buffer bin = make_buffer<I32>(Shape{3}, {c.b, c.h, c.i}), brow = make_buffer<float>(Shape{4}, {1, 2, 3, 4});
    Buffer bout = filled<I32>(Shape{3}, -1), br = filled<float>(Shape{4}, 0.0f);
    interpret(g, bin, brow, bout, br);
    EXPECT_EQ(contents<I32>(bout), (std::vector<I32>{c.nb, c.nh, c.ni})) << c.b << c.h << c.i;
    const std::vector<float> want = c.b == 0 ? std::vector<float>{2, 4, 6, 8} : std::vector<float>{-1, -2, -3, -4};
    EXPECT_EQ(contents<float>(br), want);
  }
}

TEST(Cond, TheUntakenBranchDoesNotRun) {
  // The untaken branch's load is out of range (and its store would clobber y):
  // neither happens, in checked mode too.
  Graph g = trace([](SmemRef<const I32, 4> table, SmemRef<const I32> k, SmemRef<I32, 2> y) {
    const auto i = k.load();
    const auto v = cond(i < 4, [&] { return table.at(i).load(); }, [&] {
      y.at(1).store(-1);
      return Scalar<I32>(0);
    });
    y.at(0).store(v);
  });
  Buffer bt = make_buffer<I32>(Shape{4}, {10, 11, 12, 13}), bk = Buffer::scalar<I32>(2), by = filled<I32>(Shape{2}, 7);
  interpret(g, bt, bk, by);
  EXPECT_EQ(contents<I32>(by), (std::vector<I32>{12, 7}));
  bk = Buffer::scalar<I32>(9);
  interpret(g, bt, bk, by);
  EXPECT_EQ(contents<I32>(by), (std::vector<I32>{0, -1}));
}

TEST(Cond, InsideAForiLoopWithACarry) {
  // Collatz steps from 6: the loop carries n, a cond picks the update.
  Graph g = trace([](SmemRef<I32, 9> y) {
    fori_loop(0, 9, [&](Scalar<I32> i, Scalar<I32> n) {
      y.at(i).store(n);
      return cond(n % 2 == 0, [&] { return n / 2; }, [&] { return n * 3 + 1; });
    }, Scalar<I32>(6));
  });
  Buffer by = filled<I32>(Shape{9}, 0);
  interpret(g, by);
  EXPECT_EQ(contents<I32>(by), (std::vector<I32>{6, 3, 10, 5, 16, 8, 4, 2, 1}));
}

TEST(Cond, WhenWithOtherwise) {
  Graph g = trace([](SmemRef<const I32> x, VmemRef<float, 2> y) {
    when(x.load() > 0, [&] { y.at(0).store(1.0f); }, [&] { y.at(1).store(2.0f); });
  });
  for (I32 x : {1, -1}) {
    Buffer bx = Buffer::scalar<I32>(x), by = filled<float>(Shape{2}, 0.0f);
    interpret(g, bx, by);
    EXPECT_EQ(contents<float>(by), x > 0 ? (std::vector<float>{1, 0}) : (std::vector<float>{0, 2}));
  }
}

TEST(Cond, BranchesOfDifferentShapesAreATraceError) {
  EXPECT_TRUE(throws_with<TraceError>(
      [] {
        (void)trace([](VmemRef<const float, dyn> a, VmemRef<const float, dyn> b, SmemRef<const I32> k) {
          (void)cond(k.load() > 0, [&] { return a.load(); }, [&] { return b.load(); });
        }, {Shape{4}, Shape{5}, Shape{}});
      },
      {"cond's branches return result 0 as f32[4] and f32[5]", "control_flow_test.cpp"}));
}

TEST(Switch, ClampsTheIndexLikeLaxSwitch) {
  Graph g = trace([](SmemRef<const I32> k, SmemRef<I32> y) {
    y.store(switch_(k.load(), [] { return Scalar<I32>(10); }, [] { return Scalar<I32>(11); },
                    [] { return Scalar<I32>(12); }));
  });
  for (I32 k : {-3, 0, 1, 2, 3, 40}) {
    Buffer bk = Buffer::scalar<I32>(k), by = Buffer::scalar<I32>(0);
    interpret(g, bk, by);
    EXPECT_EQ(contents<I32>(by)[0], 10 + std::clamp(k, 0, 2)) << "k " << k;
  }
}

// ---------------------------------------------------------------- unrolling

TEST(Unrolling, CppLoopUnrollsButForiLoopDoesNot) {
  auto unrolled = [](int n) {
    return trace([n](VmemRef<float, 16> y) {
      for (int i = 0; i < n; ++i) y.at(i) += 1.0f;
    });
  };
  auto rolled = [](int n) {
    return trace([n](VmemRef<float, 16> y) { fori_loop(0, n, [&](Scalar<I32> i) { y.at(i) += 1.0f; }); });
  };
  const std::size_t u1 = unrolled(1).num_ops(), u2 = unrolled(2).num_ops(), u8 = unrolled(8).num_ops();
  EXPECT_GT(u2, u1);
  EXPECT_EQ(u8 - u1, 7 * (u2 - u1));  // linear in the trip count
  EXPECT_EQ(count_ops(unrolled(8), "accum"), 8u);
  EXPECT_EQ(count_ops(unrolled(8), "fori_loop"), 0u);

  const std::size_t r1 = rolled(1).num_ops(), r2 = rolled(2).num_ops(), r8 = rolled(8).num_ops();
  EXPECT_EQ(r1, r2);
  EXPECT_EQ(r1, r8);
  EXPECT_EQ(count_ops(rolled(8), "accum"), 1u);
  EXPECT_EQ(count_ops(rolled(8), "fori_loop"), 1u);

  // Both compute the same thing.
  for (int n : {1, 5, 16}) {
    Buffer a = filled<float>(Shape{16}, 0.0f), b = filled<float>(Shape{16}, 0.0f);
    interpret(unrolled(n), a);
    interpret(rolled(n), b);
    EXPECT_EQ(contents<float>(a), contents<float>(b));
    std::vector<float> want(16, 0.0f);
    for (int i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] = 1.0f;
    EXPECT_EQ(contents<float>(a), want);
  }
}

TEST(Unrolling, LoopBodyIsTracedOnce) {
  int calls = 0;
  Graph g = trace([&](VmemRef<float, 8> y) {
    fori_loop(0, 8, [&](Scalar<I32> i) {
      ++calls;
      y.at(i).store(1.0f);
    });
  });
  EXPECT_EQ(calls, 1);
  // The body lives in its own block, owned by the loop op.
  EXPECT_GE(g.num_blocks(), 2u);
}

// ---------------------------------------------------------------- run_state

TEST(RunState, IdentityWhenTheBodyDoesNothing) {
  Graph g = trace([](VmemRef<const float, 4> x, VmemRef<float, 4> y) {
    auto out = run_state(x.load(), [](VmemRef<float, 4>) {});
    static_assert(std::is_same_v<decltype(out), Value<float, extents<4>>>);
    y.store(out);
  });
  Buffer bx = make_buffer<float>(Shape{4}, {1.5f, -2.0f, 3.0f, 0.0f}), by(DType::f32, Shape{4});
  interpret(g, bx, by);
  EXPECT_EQ(contents<float>(by), contents<float>(bx));
}

TEST(RunState, ReadModifyWrite) {
  Graph g = trace([](VmemRef<const float, 4> x, VmemRef<float, 4> y) {
    y.store(run_state(x.load(), [](VmemRef<float, 4> r) {
      r.store(r.load() * 2.0f + 1.0f);
      r.at(0) += 100.0f;
      r.at(ds(2, 2)).store(r.at(ds<2>(1)).load());
    }));
  });
  const std::vector<float> xs{1, 2, 3, 4};
  Buffer bx = make_buffer<float>(Shape{4}, xs), by(DType::f32, Shape{4});
  interpret(g, bx, by);
  std::vector<float> r;
  for (float v : xs) r.push_back(v * 2 + 1);
  r[0] += 100;
  const float r1 = r[1], r2 = r[2];
  r[2] = r1;
  r[3] = r2;
  EXPECT_TRUE(elements_match(contents<float>(by), r));
  // And the input is untouched: run_state works on a copy.
  EXPECT_EQ(contents<float>(bx), xs);
}

TEST(RunState, ReturnsATupleOfFinalValues) {
  Graph g = trace([](VmemRef<const float, 4> x, VmemRef<float, 4> y, VmemRef<I32> n) {
    auto [v, count] = run_state(std::tuple{x.load(), Scalar<I32>(0)}, [](VmemRef<float, 4> r, VmemRef<I32> c) {
      fori_loop(0, 4, [&](Scalar<I32> i) {
        when(r.at(i).load() > 0.0f, [&] {
          r.at(i).store(0.0f);
          c += 1;
        });
      });
    });
    static_assert(std::is_same_v<decltype(count), Scalar<I32>>);
    y.store(v);
    n.store(count);
  });
  const std::vector<float> xs{1, -2, 3, -4};
  Buffer bx = make_buffer<float>(Shape{4}, xs), by(DType::f32, Shape{4}), bn(DType::i32, Shape{});
  interpret(g, bx, by, bn);
  std::vector<float> want;
  I32 count = 0;
  for (float v : xs) {
    want.push_back(v > 0 ? 0.0f : v);
    count += v > 0;
  }
  EXPECT_EQ(contents<float>(by), want);
  EXPECT_EQ(contents<I32>(bn)[0], count);
}

TEST(RunState, Nested) {
  Graph g = trace([](VmemRef<I32, 3> y, VmemRef<I32> z) {
    auto outer = run_state(std::tuple{iota<I32, 3>(0), Scalar<I32>(10)}, [](VmemRef<I32, 3> a, VmemRef<I32> s) {
      // The inner state starts from the outer Ref's current contents and is
      // written back into it.
      a += 1;  // 1, 2, 3
      auto inner = run_state(a.load(), [&](VmemRef<I32, 3> b) {
        b.store(b.load() * s.load());  // 10, 20, 30
        s += 5;                         // the outer Ref is visible inside
      });
      a.store(inner + 1);  // 11, 21, 31
    });
    y.store(std::get<0>(outer));
    z.store(std::get<1>(outer));
  });
  Buffer by(DType::i32, Shape{3}), bz(DType::i32, Shape{});
  interpret(g, by, bz);
  EXPECT_EQ(contents<I32>(by), (std::vector<I32>{11, 21, 31}));
  EXPECT_EQ(contents<I32>(bz)[0], 15);
}

TEST(RunState, InsideALoopStartsFreshEachIteration) {
  Graph g = trace([](VmemRef<I32, 4> y) {
    fori_loop(0, 4, [&](Scalar<I32> i) {
      y.at(i).store(run_state(i, [&](VmemRef<I32> r) { r.store(r.load() * r.load() + i); }));
    });
  });
  Buffer by(DType::i32, Shape{4});
  interpret(g, by);
  EXPECT_EQ(contents<I32>(by), (std::vector<I32>{0, 2, 6, 12}));
}

// ---------------------------------------------------------------- run_scoped

TEST(RunScoped, ScratchWrittenThenRead) {
  Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    run_scoped([&](VmemRef<float, 8> s, SmemRef<I32> k) {
      s.store(x.load());
      k.store(3);
      s.at(ds<4>(0)) += s.at(ds<4>(4)).load();
      y.store(s.load() * cast<float>(k.load()));
    });
  });
  Buffer bx = make_buffer_fn<float>(Shape{8}, [](std::int64_t i) { return i + 1; }), by(DType::f32, Shape{8});
  interpret(g, bx, by);
  std::vector<float> s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<float>(i + 1));
  for (int i = 0; i < 4; ++i) s[static_cast<std::size_t>(i)] += s[static_cast<std::size_t>(i + 4)];
  for (float& v : s) v *= 3.0f;
  EXPECT_TRUE(elements_match(contents<float>(by), s));
}

TEST(RunScoped, ReturnsAValue) {
  Graph g = trace([](VmemRef<const I32, 4> x, VmemRef<I32, 4> y) {
    auto v = run_scoped([&](VmemRef<I32, 4> s) {
      s.store(x.load());
      s.at(0) += 10;
      return s.load();
    });
    static_assert(std::is_same_v<decltype(v), Value<I32, extents<4>>>);
    y.store(v * 2);
  });
  Buffer bx = make_buffer<I32>(Shape{4}, {1, 2, 3, 4}), by(DType::i32, Shape{4});
  interpret(g, bx, by);
  EXPECT_EQ(contents<I32>(by), (std::vector<I32>{22, 4, 6, 8}));
}

TEST(RunScoped, ReturnsATuple) {
  Graph g = trace([](VmemRef<const float, 4> x, VmemRef<float, 4> y, VmemRef<float> m) {
    auto [v, mx] = run_scoped([&](VmemRef<float, 4> s, VmemRef<float> t) {
      s.store(x.load() - 1.0f);
      t.store(reduce_max<0>(s.load()));
      return std::tuple{s.load(), t.load()};
    });
    y.store(v);
    m.store(mx);
  });
  Buffer bx = make_buffer<float>(Shape{4}, {3, 9, -1, 4}), by(DType::f32, Shape{4}), bm(DType::f32, Shape{});
  interpret(g, bx, by, bm);
  EXPECT_EQ(contents<float>(by), (std::vector<float>{2, 8, -2, 3}));
  EXPECT_EQ(contents<float>(bm)[0], 8.0f);
}

TEST(RunScoped, DynamicShapes) {
  Graph g = trace([](VmemRef<const float, 6> x, VmemRef<float, 6> y) {
    run_scoped({Shape{6}}, [&](Ref<float, extents<dyn>> s) {
      EXPECT_EQ(s.shape(), Shape{6});
      s.store(x.load());
      s.at(ds(0, 3)) += s.at(ds(3, 3)).load();
      y.store(s.load());
    });
  });
  Buffer bx = make_buffer<float>(Shape{6}, {1, 2, 3, 10, 20, 30}), by(DType::f32, Shape{6});
  interpret(g, bx, by);
  EXPECT_EQ(contents<float>(by), (std::vector<float>{11, 22, 33, 10, 20, 30}));
}

TEST(RunScoped, UnwrittenScratchReadsAsPoison) {
  // Reads of never-written scratch are made visible: NaN for floats, the
  // minimum for integers.
  Graph g = trace([](VmemRef<float, 2> y, VmemRef<I32, 2> z) {
    run_scoped([&](VmemRef<float, 2> s, VmemRef<I32, 2> t) {
      y.store(s.load());
      z.store(t.load());
    });
  });
  Buffer by = filled<float>(Shape{2}, 0.0f), bz = filled<I32>(Shape{2}, 0);
  interpret(g, by, bz);
  for (float v : contents<float>(by)) EXPECT_TRUE(std::isnan(v));
  for (I32 v : contents<I32>(bz)) EXPECT_EQ(v, std::numeric_limits<I32>::min());
}

TEST(RunScoped, InsideALoopAndNested) {
  Graph g = trace([](VmemRef<I32, 3> y) {
    fori_loop(0, 3, [&](Scalar<I32> i) {
      auto v = run_scoped([&](SmemRef<I32> a) {
        a.store(i * 10);
        return run_scoped([&](SmemRef<I32> b) {
          b.store(a.load() + 1);
          a += b.load();  // the outer scratch is visible in the inner scope
          return a.load();
        });
      });
      y.at(i).store(v);
    });
  });
  Buffer by(DType::i32, Shape{3});
  interpret(g, by);
  std::vector<I32> want;
  for (I32 i = 0; i < 3; ++i) want.push_back(i * 10 + (i * 10 + 1));
  EXPECT_EQ(contents<I32>(by), want);
}

}  // namespace
