// Dead-code elimination by side-effect level.

#include <gtest/gtest.h>

#include "support/graph_testing.hpp"
#include <refx/ir/interpret.hpp>
#include <refx/passes/pipeline.hpp>

using namespace refx;
using refx::testing::count_ops;

namespace {

std::size_t live_ops(const Graph& g) {
  std::size_t n = 0;
  std::vector<BlockId> todo{0};
  while (!todo.empty()) {
    const BlockId b = todo.back();
    todo.pop_back();
    for (OpId o : g.block(b).ops) {
      ++n;
      for (BlockId body : g.bodies(g.op(o))) todo.push_back(body);
    }
  }
  return n;
}

TEST(Dce, UnusedPureChainsGoAtOnce) {
  Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    auto dead = exp(x.load() * 2.0f) + 1.0f;  // never used
    (void)dead;
    y.store(x.load());
  });
  EXPECT_GT(passes::dce(g), 5u);
  EXPECT_EQ(live_ops(g), 2u);  // the load and the store
  EXPECT_EQ(count_ops(g, "exp"), 1u);  // still in the pool, but in no block
  EXPECT_EQ(to_text(g).find("exp"), std::string::npos);
}

TEST(Dce, EffectsOnVisibleRefsAreKept) {
  Graph g = trace([](VmemRef<float, 8> x, VmemRef<float, 8> y) {
    run_scoped([&](DmaSemaphore sem, RegularSemaphore r) {
      x.store(full<float, 8>(1.0f));
      y += x.load();
      auto c = make_async_copy(x, y, sem);
      c.start();
      c.wait();
      semaphore_signal(r, 1);
      semaphore_wait(r, 1);
    });
  });
  const std::size_t before = live_ops(g);
  EXPECT_EQ(passes::dce(g), 0u);
  EXPECT_EQ(live_ops(g), before);
}

TEST(Dce, LoopsAndScopesWithoutVisibleEffectsGo) {
  Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    // A loop computing a carry nobody reads.
    auto unused = fori_loop(0, 4, [&](Scalar<std::int32_t>, Value<float, extents<8>> acc) { return acc * 2.0f; }, x.load());
    (void)unused;
    // A scope writing only its own scratch.
    run_scoped([&](VmemRef<float, 8> scratch) { scratch.store(x.load() + 1.0f); });
    // run_state whose result is unused.
    auto r = run_state(x.load(), [&](VmemRef<float, 8> s) { s += x.load(); });
    (void)r;
    // Kept: a loop that writes y.
    fori_loop(0, 2, [&](Scalar<std::int32_t>) { y += x.load(); });
  });
  passes::dce(g);
  const std::string text = to_text(g);
  EXPECT_EQ(count_ops(g, "fori_loop"), 2u);  // in the pool
  EXPECT_EQ(text.find("scope"), std::string::npos) << text;
  std::size_t loops = 0;
  for (OpId o : g.block(0).ops) loops += g.op(o).prim->name == "fori_loop";
  EXPECT_EQ(loops, 1u) << text;
  Buffer x = refx::testing::make_buffer_fn<float>(Shape{8}, [](std::int64_t i) { return float(i); });
  Buffer y = refx::testing::filled<float>(Shape{8}, 1.0f);
  interpret(g, x, y);
  EXPECT_EQ(refx::testing::contents<float>(y)[3], 7.0f);
}

TEST(Dce, ScopesWithSemaphoresOrOutsideWritesStay) {
  Graph g = trace([](VmemRef<float, 8> y) {
    run_scoped([&](RegularSemaphore r) {
      semaphore_signal(r, 1);
      semaphore_wait(r, 1);
    });
    run_scoped([&](VmemRef<float, 8> scratch) {
      scratch.store(full<float, 8>(2.0f));
      y.store(scratch.load());
    });
  });
  EXPECT_EQ(passes::dce(g), 0u);
}

TEST(Dce, ValuesUsedInNestedBodiesStay) {
  Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    auto scale = x.load() * 3.0f;
    fori_loop(0, 2, [&](Scalar<std::int32_t>) { y += scale; });
  });
  EXPECT_EQ(passes::dce(g), 0u);
}

TEST(Dce, AKernelWithNoEffectsBecomesEmpty) {
  Graph g = trace([](VmemRef<const float, 8> x) {
    auto v = x.load() * 2.0f;
    (void)v;
  });
  passes::dce(g);
  EXPECT_EQ(live_ops(g), 0u);
}

TEST(Dce, CanBeSwitchedOff) {
  const auto f = [](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    auto dead = x.load() + 1.0f;
    (void)dead;
    y.store(x.load());
  };
  Graph a = trace(f), b = trace(f);
  passes::Options off;
  off.dce = false;
  off.fuse = false;
  passes::run_pipeline(a, off);
  passes::Options on = off;
  on.dce = true;
  passes::run_pipeline(b, on);
  EXPECT_GT(live_ops(a), live_ops(b));
}

}  // namespace
