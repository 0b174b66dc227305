// Dependencies and scheduling: edges by kind, the list scheduler's order
// (starts early, waits late, every dependency kept), and the printed and DOT
// views of the schedule.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <refx/extend.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/ir/eval.hpp>
#include <refx/passes/pipeline.hpp>

#include "support/graph_testing.hpp"

using namespace refx;
using refx::graph_testing::trace_for;

namespace {

const Mesh ring2{{"x", 2}};

/// `g` after the pass pipeline with fusion off (each op scheduled on its own), as text.
std::string scheduled(Graph& g) {
  passes::Options o;
  o.fuse = false;
  passes::run_pipeline(g, o);
  return to_text(g);
}

std::size_t at(const std::string& text, const std::string& needle) {
  const auto p = text.find(needle);
  EXPECT_NE(p, std::string::npos) << "missing '" << needle << "' in\n" << text;
  return p;
}

bool has_edge(const Graph& g, const std::vector<DotEdge>& edges, std::string_view from, std::string_view to,
              std::string_view kind) {
  for (const DotEdge& e : edges)
    if (g.op(e.from).prim->name == from && g.op(e.to).prim->name == to && e.kind == kind) return true;
  return false;
}

// A remote copy, then compute that the user wrote after its wait.
const auto overlap_kernel = [](HbmRef<const float, 4096> x, VmemRef<const float, 256> a, HbmRef<float, 4096> y,
                               VmemRef<float, 256> b) {
  auto me = axis_index("x");
  run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
    auto c = make_async_remote_copy(x, y, send, recv, (me + 1) % 2);
    c.start();
    c.wait();
    b.store(exp(a.load()) * 2.0f);  // independent of x and y
  });
};

TEST(Schedule, ComputeWrittenAfterAWaitMovesBetweenStartAndWait) {
  Graph g = trace_for(ring2, overlap_kernel);
  const std::string before = to_text(g);
  EXPECT_LT(at(before, "dma_wait[desc=0 recv]"), at(before, "exp"));
  const std::string after = scheduled(g);
  EXPECT_LT(at(after, "dma_start"), at(after, "exp")) << after;
  EXPECT_LT(at(after, "exp"), at(after, "dma_wait[desc=0 send]")) << after;
  EXPECT_LT(at(after, "d[...] <-"), at(after, "dma_wait[desc=0 send]")) << after;  // b prints as d
}

TEST(Schedule, TheFusedComputeMovesToo) {
  Graph g = trace_for(ring2, overlap_kernel);
  passes::run_pipeline(g);
  const std::string text = to_text(g);
  EXPECT_LT(at(text, "dma_start"), at(text, "fused[exp mul loads=1 store]")) << text;
  EXPECT_LT(at(text, "fused[exp mul loads=1 store]"), at(text, "dma_wait")) << text;
}

TEST(Schedule, TheScheduledKernelRunsOnTheRuntime) {
  auto exe = kernel(overlap_kernel).compile(ring2);
  const std::string text = to_text(exe.graph());
  EXPECT_LT(at(text, "fused"), at(text, "dma_wait"));
  auto x = Array::generate<float>(2, Shape{4096}, [](int d, std::int64_t i) { return float(d * 10000 + i); });
  auto a = Array::generate<float>(2, Shape{256}, [](int, std::int64_t i) { return float(i) * 0.01f; });
  auto out = exe(x, a);
  EXPECT_EQ(out[0].to_host<float>(0)[9], float(10000 + 9));
  EXPECT_EQ(out[0].to_host<float>(1)[9], 9.0f);
  EXPECT_EQ(out[1].to_host<float>(1)[3], std::exp(0.03f) * 2.0f);
}

TEST(Schedule, ConsumersOfTheCopyStayAfterItsWait) {
  Graph g = trace([](VmemRef<float, 64> x, VmemRef<float, 64> y, VmemRef<float, 64> z, VmemRef<float, 64> w) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start();
      c.wait();
      z.store(y.load() + 1.0f);  // reads the destination: after the wait
      x.store(w.load());          // writes the source: after the wait too
      w.store(full<float, 64>(3.0f));
    });
  });
  const std::string text = scheduled(g);
  EXPECT_LT(at(text, "dma_wait"), at(text, "add")) << text;
  EXPECT_LT(at(text, "dma_wait"), at(text, "a[...] <-")) << text;  // x is printed as `a`
}

TEST(Schedule, StartsMoveAheadOfIndependentCompute) {
  Graph g = trace([](VmemRef<float, 64> x, VmemRef<float, 64> y, VmemRef<const float, 64> a, VmemRef<float, 64> b) {
    run_scoped([&](DmaSemaphore sem) {
      b.store(exp(a.load()));
      auto c = make_async_copy(x, y, sem);
      c.start();
      c.wait();
    });
  });
  const std::string text = scheduled(g);
  EXPECT_LT(at(text, "dma_start"), at(text, "exp")) << text;
  EXPECT_LT(at(text, "exp"), at(text, "dma_wait")) << text;
}

TEST(Schedule, WhatAStartNeedsComesEarlyWithIt) {
  Graph g = trace([](VmemRef<float, 64> x, VmemRef<float, 64> y, VmemRef<const float, 64> a, VmemRef<float, 64> b) {
    run_scoped([&](DmaSemaphore sem) {
      b.store(exp(a.load()));    // independent
      x.store(a.load() * 3.0f);  // the copy's source
      auto c = make_async_copy(x, y, sem);
      c.start();
      c.wait();
    });
  });
  const std::string text = scheduled(g);
  EXPECT_LT(at(text, "mul"), at(text, "dma_start")) << text;
  EXPECT_LT(at(text, "dma_start"), at(text, "exp")) << text;
}

TEST(Schedule, ProtocolOpsKeepTheirOrder) {
  Graph g = trace_for(ring2, [](HbmRef<const float, 64> x, HbmRef<float, 64> y, VmemRef<float, 8> z) {
    auto me = axis_index("x");
    run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
      z.store(full<float, 8>(1.0f));
      semaphore_signal(ready, 1, (me + 1) % 2);
      semaphore_wait(ready, 1);
      auto c = make_async_remote_copy(x, y, send, recv, (me + 1) % 2);
      c.start();
      c.wait();
    });
  });
  const std::string text = scheduled(g);
  EXPECT_LT(at(text, "semaphore_signal"), at(text, "semaphore_wait")) << text;
  EXPECT_LT(at(text, "semaphore_wait"), at(text, "dma_start")) << text;
  EXPECT_LT(at(text, "dma_start"), at(text, "dma_wait[desc=0 send]")) << text;
}

TEST(Schedule, SchedulesInsideLoopBodies) {
  Graph g = trace([](VmemRef<float, 4, 64> x, VmemRef<float, 4, 64> y, VmemRef<const float, 64> a, VmemRef<float, 4, 64> b) {
    run_scoped([&](DmaSemaphore sem) {
      fori_loop(0, 4, [&](Scalar<std::int32_t> i) {
        auto c = make_async_copy(x.at(i), y.at(i), sem);
        c.start();
        c.wait();
        b.at(i).store(exp(a.load()));
      });
    });
  });
  const std::string text = scheduled(g);
  EXPECT_LT(at(text, "dma_start"), at(text, "exp")) << text;
  EXPECT_LT(at(text, "exp"), at(text, "dma_wait")) << text;
}

TEST(Schedule, IsDeterministicAndIdempotent) {
  Graph g1 = trace_for(ring2, overlap_kernel), g2 = trace_for(ring2, overlap_kernel);
  passes::schedule(g1);
  passes::schedule(g2);
  EXPECT_EQ(to_text(g1), to_text(g2));
  EXPECT_EQ(passes::schedule(g1), 0u);
}

// ---- dependency edges

TEST(Dependencies, RefEdgesFollowOverlappingRegions) {
  Graph g = trace([](VmemRef<float, 16> x, VmemRef<float, 4> y) {
    x.at(ds(0, 8)).store(full<float, 8>(1.0f));
    y.store(x.at(ds(8, 4)).load());  // disjoint from the store
    y.store(x.at(ds(4, 4)).load());  // overlaps it
  });
  passes::GraphFacts facts(g);
  const passes::BlockDeps d = passes::block_dependencies(g, facts, 0);
  const auto& ops = g.block(0).ops;
  std::vector<std::size_t> stores, loads;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (g.op(ops[i]).prim->name == "store") stores.push_back(i);
    if (g.op(ops[i]).prim->name == "load") loads.push_back(i);
  }
  ASSERT_EQ(stores.size(), 3u);
  ASSERT_EQ(loads.size(), 2u);
  const auto edge = [&](std::size_t from, std::size_t to) {
    for (auto s : d.successors(from))
      if (static_cast<std::size_t>(s) == to) return true;
    return false;
  };
  EXPECT_FALSE(edge(stores[0], loads[0]));
  EXPECT_TRUE(edge(stores[0], loads[1]));
  EXPECT_TRUE(edge(stores[1], stores[2]));  // y written twice
}

TEST(Dependencies, NoEdgeBetweenReadsButAccumulationsConflict) {
  Graph g = trace([](VmemRef<float, 8> x, VmemRef<float, 8> y) {
    auto a = x.load();
    auto b = x.load();
    y += a;
    y += b;
  });
  const auto edges = passes::dependency_edges(g);
  EXPECT_FALSE(has_edge(g, edges, "load", "load", "ref"));
  EXPECT_TRUE(has_edge(g, edges, "accum", "accum", "ref"));
}

TEST(Dependencies, SemaphoreAndOrderEdges) {
  Graph g = trace_for(ring2, overlap_kernel);
  const auto edges = passes::dependency_edges(g);
  EXPECT_TRUE(has_edge(g, edges, "dma_start", "dma_wait", "semaphore"));
  EXPECT_TRUE(has_edge(g, edges, "dma_start", "dma_wait", "order"));
  EXPECT_TRUE(has_edge(g, edges, "dma_start", "dma_wait", "ref"));
  const auto with_data = passes::dependency_edges(g, true);
  EXPECT_TRUE(has_edge(g, with_data, "load", "exp", "data"));
  EXPECT_FALSE(has_edge(g, edges, "load", "exp", "data"));
}

// Host effects: two ordered kinds and an unordered one (test primitives).
void io_abstract(AbstractContext& c) {
  const auto kind = static_cast<std::uint8_t>(c.attr(0));
  c.add_effect(kind == 0 ? effect_io : effect_ordered, no_id, kind);
}
ExecStatus io_impl(ExecContext&, const Op&) { return ExecStatus::done; }
const Primitive& host_effect = define_primitive(Primitive{"test_host_effect", io_abstract, io_impl});

TEST(Dependencies, OneTokenChainPerOrderedEffectKind) {
  Graph g = trace([](VmemRef<float, 8> x) {
    extend::bind_effect(host_effect, extend::Attrs{1});
    extend::bind_effect(host_effect, extend::Attrs{2});
    extend::bind_effect(host_effect, extend::Attrs{1});
    extend::bind_effect(host_effect, extend::Attrs{0});
    extend::bind_effect(host_effect, extend::Attrs{0});
    x.store(full<float, 8>(0.0f));
  });
  passes::GraphFacts facts(g);
  const passes::BlockDeps d = passes::block_dependencies(g, facts, 0);
  std::vector<std::size_t> fx;
  for (std::size_t i = 0; i < g.block(0).ops.size(); ++i)
    if (g.op(g.block(0).ops[i]).prim == &host_effect) fx.push_back(i);
  ASSERT_EQ(fx.size(), 5u);
  const auto edge = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = static_cast<std::size_t>(d.succ_begin[from]); k < static_cast<std::size_t>(d.succ_begin[from + 1]); ++k)
      if (static_cast<std::size_t>(d.succ[k]) == to && d.kind[k] == passes::DepKind::token) return true;
    return false;
  };
  EXPECT_TRUE(edge(fx[0], fx[2]));   // kind 1 chain
  EXPECT_FALSE(edge(fx[0], fx[1]));  // kinds 1 and 2 do not order each other
  EXPECT_FALSE(edge(fx[3], fx[4]));  // unordered effects do not chain
  passes::dce(g);                    // host effects are never removed
  EXPECT_EQ(refx::testing::count_ops(g, "test_host_effect"), 5u);
}

// An optimization barrier (the primitive may come with refx; else the test defines it).
void barrier_abstract(AbstractContext& c) {
  for (std::size_t i = 0; i < c.num_inputs(); ++i) c.add_output(c.input(i));
}
ExecStatus barrier_impl(ExecContext& ctx, const Op& op) {
  for (std::size_t i = 0; i < op.in_count; ++i) ctx.set_out(op, i, ctx.in(op, i).clone());
  return ExecStatus::done;
}
const Primitive& barrier_prim() {
  if (const Primitive* p = find_primitive("optimization_barrier")) return *p;
  return define_primitive(Primitive{"optimization_barrier", barrier_abstract, barrier_impl});
}

TEST(Schedule, NothingMovesAcrossAnOptimizationBarrier) {
  const Primitive& barrier = barrier_prim();
  Graph g = trace([&](VmemRef<float, 64> x, VmemRef<float, 64> y, VmemRef<const float, 64> a, VmemRef<float, 64> b) {
    run_scoped([&](DmaSemaphore sem) {
      b.store(exp(a.load()));
      auto v = extend::bind<float, extents<>>(barrier, Scalar<float>(1.0f));
      (void)v;
      auto c = make_async_copy(x, y, sem);
      c.start();
      c.wait();
    });
  });
  const std::string text = scheduled(g);
  EXPECT_LT(at(text, "exp"), at(text, "optimization_barrier")) << text;
  EXPECT_LT(at(text, "optimization_barrier"), at(text, "dma_start")) << text;
  EXPECT_EQ(refx::testing::count_ops(g, "optimization_barrier"), 1u);  // kept by DCE
}

// ---- DOT export

TEST(Dot, DependencyEdgesAreColouredByKind) {
  Graph g = trace_for(ring2, overlap_kernel);
  const std::string dot = to_dot(g, passes::dependency_edges(g));
  EXPECT_NE(dot.find("label=\"semaphore\""), std::string::npos);
  EXPECT_NE(dot.find("label=\"ref\""), std::string::npos);
  EXPECT_NE(dot.find("label=\"order\""), std::string::npos);
}

TEST(Dot, RefxDotFileWritesEveryCompiledKernel) {
  const std::string pattern = ::testing::TempDir() + "refx_graph_{}.dot";
  ::setenv("REFX_DOT_FILE", pattern.c_str(), 1);
  auto exe = kernel(overlap_kernel).name("overlap").compile(ring2);
  ::unsetenv("REFX_DOT_FILE");
  bool found = false;
  for (int k = 0; k < 64 && !found; ++k) {
    std::string file = pattern;
    file.replace(file.find("{}"), 2, std::to_string(k));
    std::ifstream in(file);
    if (!in) continue;
    std::stringstream s;
    s << in.rdbuf();
    found = s.str().find("digraph refx") != std::string::npos && s.str().find("dma_start") != std::string::npos;
  }
  EXPECT_TRUE(found);
}

TEST(Schedule, LargeGraphsScheduleInLinearTime) {
  Graph g = trace([](VmemRef<float, 1024, 16> x, VmemRef<float, 1024, 16> y) {
    for (int i = 0; i < 1024; ++i) y.at(i).store(x.at(i).load() * 2.0f + 1.0f);
  });
  const auto n = g.num_ops();
  passes::Options o;
  passes::run_pipeline(g, o);
  EXPECT_GT(n, 4000u);
  Buffer x = refx::testing::make_buffer_fn<float>(Shape{1024, 16}, [](std::int64_t i) { return float(i); });
  Buffer y(DType::f32, Shape{1024, 16});
  interpret(g, x, y);
  EXPECT_EQ(refx::testing::contents<float>(y)[16 * 500 + 1], float(16 * 500 + 1) * 2.0f + 1.0f);
}

}  // namespace
