// Trace-time common-subexpression elimination: pure ops with equal operands
// and attributes are recorded once, in scope, and never merged otherwise.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>

using namespace refx;

namespace {

std::int64_t count(const Graph& g, std::string_view prim) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < g.num_ops(); ++i) n += g.op(static_cast<OpId>(i)).prim->name == prim;
  return n;
}

std::vector<float> run(const Graph& g, std::vector<float> xs) {
  const auto n = static_cast<std::int64_t>(xs.size());
  Buffer x = Buffer::from<float>(Shape{n}, xs), y(DType::f32, Shape{n});
  interpret(g, x, y);
  return y.to_vector<float>();
}

}  // namespace

TEST(Cse, EqualPureOpsAreRecordedOnce) {
  auto g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    auto a = x.load();
    auto b = a * a;
    auto c = a * a;
    y.store(b + c);
  });
  EXPECT_EQ(count(g, "mul"), 1) << fmt::format("{}", g);
  EXPECT_EQ(run(g, {1, 2, 3, 4, 5, 6, 7, 8})[2], 18.0f);
}

TEST(Cse, DifferentOperandsOrderOrAttributesAreKept) {
  auto g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    auto a = x.load();
    auto b = exp(a);
    y.store(a - b + (b - a) + a * 2.0f + a * 3.0f);
  });
  EXPECT_EQ(count(g, "sub"), 2)  << fmt::format("{}", g);  // a - b and b - a differ
  EXPECT_EQ(count(g, "mul"), 2)  << fmt::format("{}", g);  // different constants
}

TEST(Cse, LoadsAreNeverMerged) {
  auto g = trace([](VmemRef<float, 8> x, VmemRef<float, 8> y) {
    auto a = x.load();
    x.store(a + 1.0f);
    auto b = x.load();  // a read after a write: a different value
    y.store(a + b);
  });
  EXPECT_EQ(count(g, "load"), 2) << fmt::format("{}", g);
  const auto out = run(g, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(out[0], 3.0f);
}

TEST(Cse, OpsOfAClosedBodyAreNotReused) {
  auto g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    auto a = x.load();
    fori_loop(0, 2, [&](Scalar<std::int32_t>) { y.store(a * a); });
    y.store(y.load() + a * a);  // the loop's a * a is out of scope here
  });
  EXPECT_EQ(count(g, "mul"), 2) << fmt::format("{}", g);
  EXPECT_EQ(run(g, {1, 2, 3, 4, 5, 6, 7, 8})[3], 32.0f);
}

TEST(Cse, OpsOfTheEnclosingBlockAreReusedInsideABody) {
  auto g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    auto a = x.load();
    auto sq = a * a;
    fori_loop(0, 2, [&](Scalar<std::int32_t>) { y.store(a * a + sq); });
  });
  EXPECT_EQ(count(g, "mul"), 1) << fmt::format("{}", g);
  EXPECT_EQ(run(g, {1, 2, 3, 4, 5, 6, 7, 8})[1], 8.0f);
}

TEST(Cse, AValueWithManyPureUsersStaysCorrect) {
  // 40 distinct users of one value, then each again: every repeat is either
  // merged or recorded anew, and the results are right either way.
  auto g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    auto a = x.load();
    auto acc = a;
    for (int k = 0; k < 40; ++k) acc = acc + a * static_cast<float>(k);
    for (int k = 0; k < 40; ++k) acc = acc - a * static_cast<float>(k);
    y.store(acc);
  });
  EXPECT_LE(count(g, "mul"), 80) << fmt::format("{}", g);
  EXPECT_GE(count(g, "mul"), 40) << fmt::format("{}", g);
  const auto out = run(g, {1, 2, 3, 4, 5, 6, 7, 8});
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], static_cast<float>(i + 1)) << i;
}

TEST(Cse, EqualConstantsAreRecordedOnce) {
  auto g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    y.store(x.load() + full<float, 8>(2.0f) * full<float, 8>(2.0f));
  });
  EXPECT_EQ(count(g, "constant"), 1) << fmt::format("{}", g);
  EXPECT_EQ(count(g, "broadcast"), 1) << fmt::format("{}", g);
  EXPECT_EQ(run(g, {1, 2, 3, 4, 5, 6, 7, 8})[0], 5.0f);
}
