// User passes that rewrite a traced graph (passes::Options::user_passes,
// extend::Rewriter): a mul feeding an add becomes one mul_add op, at the top
// level and inside a loop body; the rewritten op is what runs; and every
// rewrite the Rewriter cannot keep sound is a refx: error naming the op.

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include <refx/extend.hpp>
#include <refx/refx.hpp>
#include <refx/ir/eval.hpp>

using namespace refx;

namespace {

std::atomic<int> mul_add_runs{0};

void mul_add_abstract(AbstractContext& c) {
  if (c.num_inputs() != 3) c.fail("takes 3 operands, got {}", c.num_inputs());
  extend::elementwise_same_type(c);
}

ExecStatus mul_add_impl(ExecContext& ctx, const Op& op) {
  ++mul_add_runs;
  const Buffer &x = ctx.in(op, 0), &y = ctx.in(op, 1), &z = ctx.in(op, 2);
  Buffer& out = ctx.out(op, 0);
  for (std::int64_t i = 0; i < out.size(); ++i) out.data<float>()[i] = x.data<float>()[i] * y.data<float>()[i] + z.data<float>()[i];
  return ExecStatus::done;
}

const Primitive& mul_add_p =
    define_primitive(Primitive{.name = "test_mul_add", .abstract_eval = mul_add_abstract, .impl = mul_add_impl});

// One output of another element type than its operand: for the type check.
void to_i32_abstract(AbstractContext& c) { c.add_output(ValueType{.dtype = DType::i32, .shape = c.input(0).shape}); }
ExecStatus to_i32_impl(ExecContext&, const Op&) { return ExecStatus::done; }
const Primitive& to_i32_p =
    define_primitive(Primitive{.name = "test_to_i32", .abstract_eval = to_i32_abstract, .impl = to_i32_impl});

/// The pass under test: add(mul(a, b), c) -> mul_add(a, b, c) where the mul
/// has no other use. Returns how many it replaced through `count`.
auto fuse_mul_add(int* count = nullptr) {
  return [count](extend::Rewriter& r) {
    const Graph& g = r.graph();
    for (const OpId id : extend::find_ops(g, prim::add)) {
      const ValueId product = g.inputs(g.op(id))[0], addend = g.inputs(g.op(id))[1];
      const OpId m = r.producer(product);
      if (m == no_id || g.op(m).prim != &prim::mul || r.uses(product) != 1) continue;
      const ValueId operands[] = {g.inputs(g.op(m))[0], g.inputs(g.op(m))[1], addend};
      r.replace(id, mul_add_p, operands);
      if (count) ++*count;
    }
  };
}

using In = VmemRef<const float, 8>;
using Out = VmemRef<float, 8>;

Array input() {
  return Array::generate<float>(1, Shape{8}, [](int, std::int64_t i) { return static_cast<float>(i) - 3.0f; });
}

TEST(Rewrite, AMulFeedingAnAddBecomesOneMulAdd) {
  for (const bool fuse : {false, true}) {
    int replaced = 0;
    const Executable exe = kernel([](In x, Out y) {
                             const auto v = x.load();
                             y.store(v * v + v);
                           })
                               .passes({.fuse = fuse, .user_passes = {fuse_mul_add(&replaced)}})
                               .compile(Mesh{{"x", 1}});
    EXPECT_EQ(replaced, 1);
    if (!fuse) {
      EXPECT_EQ(extend::count_ops(exe.graph(), mul_add_p), 1u) << fmt::format("{}", exe.graph());
      EXPECT_EQ(extend::count_ops(exe.graph(), prim::mul), 0u) << "DCE removes the mul that lost its use";
      EXPECT_EQ(extend::count_ops(exe.graph(), prim::add), 0u);
    }
    const int before = mul_add_runs.load();
    const auto y = exe(input())[0].to_host<float>(0);
    if (!fuse) {
      EXPECT_EQ(mul_add_runs.load() - before, 1) << "the rewritten op is what runs";
    }
    for (std::int64_t i = 0; i < 8; ++i) {
      const float v = static_cast<float>(i) - 3.0f;
      EXPECT_EQ(y[static_cast<std::size_t>(i)], v * v + v) << "element " << i << (fuse ? ", fused" : "");
    }
  }
}

TEST(Rewrite, AMulWithAnotherUseStays) {
  int replaced = 0;
  const Executable exe = kernel([](In x, Out y) {
                           const auto v = x.load();
                           const auto p = v * v;
                           y.store((p + v) * p);
                         })
                             .passes({.fuse = false, .user_passes = {fuse_mul_add(&replaced)}})
                             .compile(Mesh{{"x", 1}});
  EXPECT_EQ(replaced, 0);
  EXPECT_EQ(extend::count_ops(exe.graph(), mul_add_p), 0u);
}

// A product used as a view's traced index counts as used.
TEST(Rewrite, AnIndexOfAViewIsAUse) {
  std::int32_t uses = -1;
  (void)kernel([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    const auto i = axis_index("x") * 2;
    y.at(ds(i, 2)).store(x.at(ds(0, 2)).load());
  })
      .passes({.user_passes = {[&](extend::Rewriter& r) {
        const OpId mul = extend::find_ops(r.graph(), prim::mul).at(0);
        uses = r.uses(r.graph().outputs(r.graph().op(mul))[0]);
      }}})
      .compile(Mesh{{"x", 4}});
  EXPECT_EQ(uses, 1);
}

// In a fori_loop body, with one operand from the body (the carry) and one
// from the kernel body around it.
TEST(Rewrite, InsideALoopBodyWithAnOperandFromOutside) {
  int replaced = 0;
  const Executable exe =
      kernel([](In x, Out y) {
        const auto x0 = x.load();
        y.store(fori_loop(0, 3, [&](Scalar<std::int32_t>, Value<float, extents<8>> acc) { return acc * x0 + x0; }, x0));
      })
          .passes({.fuse = false, .user_passes = {fuse_mul_add(&replaced)}})
          .compile(Mesh{{"x", 1}});
  EXPECT_EQ(replaced, 1);
  const int before = mul_add_runs.load();
  const auto y = exe(input())[0].to_host<float>(0);
  EXPECT_EQ(mul_add_runs.load() - before, 3) << "once per iteration";
  for (std::int64_t i = 0; i < 8; ++i) {
    const float v = static_cast<float>(i) - 3.0f;
    float acc = v;
    for (int k = 0; k < 3; ++k) acc = acc * v + v;
    EXPECT_EQ(y[static_cast<std::size_t>(i)], acc) << "element " << i;
  }
}

/// The refx: message of compiling `k` with `pass`.
template <class K, class Pass>
std::string error_of(K&& k, Pass pass) {
  try {
    (void)std::forward<K>(k).passes({.user_passes = {pass}}).compile(Mesh{{"x", 1}});
  } catch (const Error& e) {
    return e.what();
  }
  return "(compiled)";
}

/// y = x + x: one add whose operands are one Value.
auto doubled() {
  return kernel([](In x, Out y) {
    const auto v = x.load();
    y.store(v + v);
  });
}

TEST(RewriteErrors, AnOpWithEffectsCannotBeReplaced) {
  const std::string msg = error_of(kernel([](In x, Out y) { y.store(x.load()); }), [](extend::Rewriter& r) {
    const OpId store = extend::find_ops(r.graph(), prim::store).at(0);
    const ValueId operands[] = {0, 0, 0};  // never looked at: the op is refused first
    r.replace(store, mul_add_p, operands);
  });
  EXPECT_NE(msg.find("refx: Rewriter::replace: op"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'store'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("only a pure op"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rewrite_test.cpp"), std::string::npos) << "names the user's line: " << msg;
}

TEST(RewriteErrors, AnOperandDefinedLaterIsRejected) {
  const std::string msg = error_of(kernel([](In x, Out y) {
                                     const auto v = x.load();
                                     const auto a = v + v;
                                     y.store(a * v);
                                   }),
                                   [](extend::Rewriter& r) {
                                     const Graph& g = r.graph();
                                     const OpId add = extend::find_ops(g, prim::add).at(0);
                                     const OpId mul = extend::find_ops(g, prim::mul).at(0);
                                     const ValueId later = g.outputs(g.op(mul))[0];
                                     const ValueId operands[] = {later, later, later};
                                     r.replace(add, mul_add_p, operands);
                                   });
  EXPECT_NE(msg.find("is not defined before the op"), std::string::npos) << msg;
}

TEST(RewriteErrors, OtherResultTypesAreRejected) {
  const std::string msg = error_of(doubled(),
                                   [](extend::Rewriter& r) {
                                     const Graph& g = r.graph();
                                     const OpId add = extend::find_ops(g, prim::add).at(0);
                                     const ValueId operands[] = {g.inputs(g.op(add))[0]};
                                     r.replace(add, to_i32_p, operands);
                                   });
  EXPECT_NE(msg.find("'test_to_i32' gives (i32[8]) where the op defines (f32[8])"), std::string::npos) << msg;
}

TEST(RewriteErrors, TheNewPrimitivesAbstractEvalChecksItsOperands) {
  const std::string msg = error_of(doubled(),
                                   [](extend::Rewriter& r) {
                                     const Graph& g = r.graph();
                                     const OpId add = extend::find_ops(g, prim::add).at(0);
                                     r.replace(add, mul_add_p, g.inputs(g.op(add)));  // two operands, not three
                                   });
  EXPECT_NE(msg.find("refx: test_mul_add: takes 3 operands, got 2"), std::string::npos) << msg;
}

TEST(RewriteErrors, AReplacedOpCannotBeReplacedAgain) {
  const std::string msg = error_of(kernel([](In x, Out y) {
                                     const auto v = x.load();
                                     y.store(v * v + v);
                                   }),
                                   [](extend::Rewriter& r) {
                                     const OpId add = extend::find_ops(r.graph(), prim::add).at(0);
                                     fuse_mul_add()(r);
                                     const ValueId operands[] = {0, 0, 0};
                                     r.replace(add, mul_add_p, operands);
                                   });
  EXPECT_NE(msg.find("is not in the graph (replaced or removed)"), std::string::npos) << msg;
}

}  // namespace
