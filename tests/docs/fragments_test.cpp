// The compiled sources of fragments that pages quote and that no example
// holds: docs/graph.md (and the output it shows), docs/effects.md section 2,
// docs/performance.md. Each region between [snippet:NAME] markers is quoted
// verbatim by a page (docs.Docs.FragmentsQuoteACompiledSourceVerbatim), each
// DOC_OUTPUT is shown by one (docs.Docs.OutputsMatchThePages, below).

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <refx/extend.hpp>
#include <refx/refx.hpp>

#include "docs/doc_outputs.hpp"

using namespace refx;

namespace {

// The printed graph without the `  # file:line` comments.
std::string without_locations(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (const auto at = line.find("  # "); at != std::string::npos) line.resize(at);
    out += line + "\n";
  }
  return out;
}

// ---- docs/graph.md

// [snippet:overlap]
// Send x to the right neighbour; meanwhile compute b from a. The compute is
// written after the wait, as a first draft would have it.
auto permute_and_compute = [](HbmRef<const float, 4096> x, VmemRef<const float, 256> a, HbmRef<float, 4096> y,
                              VmemRef<float, 256> b) {
  auto right = (axis_index("x") + 1) % axis_size("x");
  run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
    auto copy = make_async_remote_copy(x, y, send, recv, right);
    copy.start();
    copy.wait();
    b.store(exp(a.load()) * 2.0f);  // does not touch x or y
  });
};
// [/snippet]

Executable scheduled_overlap() {
  const Mesh mesh{{"x", 4}};
  // [snippet:compile]
  auto exe = kernel(permute_and_compute).compile(mesh);  // verify, dce, schedule, fuse
  fmt::print("{}", exe.graph());                         // the scheduled program
  // [/snippet]
  return exe;
}

TEST(GraphPage, TheScheduleOverlapsTheCopyWithTheCompute) {
  const std::string text = to_text(scheduled_overlap().graph());
  EXPECT_LT(text.find("dma_start"), text.find("fused[exp"));
  EXPECT_LT(text.find("fused[exp"), text.find("dma_wait"));
}

DOC_OUTPUT("overlap-schedule") { return without_locations(to_text(scheduled_overlap().graph())); }

DOC_OUTPUT("overlap-unscheduled") {
  passes::Options plain;
  plain.schedule = plain.fuse = false;
  return without_locations(to_text(kernel(permute_and_compute).passes(plain).compile(Mesh{{"x", 4}}).graph()));
}

std::string hazard_message() {
  // [snippet:hazard]
  auto racy = [](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto copy = make_async_copy(x, y, sem);
      copy.start();
      x.store(full<float, 16>(0.0f));  // the copy may still be reading x
      copy.wait();
    });
  };
  // [/snippet]
  try {
    passes::verify(trace(racy));
  } catch (const VerifyError& e) {
    return std::string(e.what()) + "\n";
  }
  return "no VerifyError\n";
}

TEST(GraphPage, AHazardNamesBothLines) { EXPECT_NE(hazard_message().find("writes the source of the copy"), std::string::npos); }

DOC_OUTPUT("hazard-message") { return hazard_message(); }

Graph fused_relu_axpby() {
  // [snippet:fusion]
  auto relu_axpby = [](SmemRef<const float> a, SmemRef<const float> b, VmemRef<const float, 1024> x,
                       VmemRef<const float, 1024> y, VmemRef<float, 1024> out) {
    out.store(max(a.load() * x.load() + b.load() * y.load(), 0.0f));
  };
  Graph g = trace(relu_axpby);
  passes::run_pipeline(g);
  // [/snippet]
  return g;
}

TEST(GraphPage, FusionMakesOneLoop) { EXPECT_EQ(extend::count_ops(fused_relu_axpby(), "fused"), 1u); }

DOC_OUTPUT("fusion") { return without_locations(to_text(fused_relu_axpby())); }

// ---- docs/effects.md, section 2

struct Progress {
  std::atomic<int> ticks{0};
  void tick() { ++ticks; }
};

TEST(EffectsPage, EffectsInsideKernels) {
  Runtime rt(RuntimeOptions{.workers = 2});
  std::mutex mu;
  std::vector<std::string> printed, logged;
  rt.set_print_sink([&](std::string_view text) { printed.emplace_back(text); });
  auto log = [&](std::int32_t step, std::span<const float> x) {
    std::lock_guard lock(mu);
    logged.push_back(fmt::format("{} {}", step, x.size()));
  };
  Progress progress;
  const auto exe = kernel([&](VmemRef<const float, 4> xs) {
                     auto me = axis_index("x");
                     fori_loop(0, 2, [&](Scalar<std::int32_t> i) {
                       auto x = xs.load();
                       // [snippet:effects-inside-kernels]
                       debug_print("step {}: x = {:.3f}", i, x);                 // unordered
                       debug_print(ordered, "device {} done", me);               // ordered
                       io_callback([&](std::int32_t step, std::span<const float> x) { log(step, x); }, i, x);
                       io_callback(ordered, [&] { progress.tick(); });
                       // [/snippet]
                     });
                   }).compile(Mesh{{"x", 2}}, {}, rt);
  exe(Array::generate<float>(2, Shape{4}, [](int d, std::int64_t k) { return d + 0.25 * static_cast<double>(k); }, rt));
  effects_barrier(rt);
  EXPECT_EQ(printed.size(), 8u);  // 2 devices x 2 steps x 2 prints
  EXPECT_EQ(std::count(printed.begin(), printed.end(), "step 1: x = [1.000, 1.250, 1.500, 1.750]"), 1);
  EXPECT_EQ(std::count(logged.begin(), logged.end(), "0 4"), 2);
  EXPECT_EQ(progress.ticks.load(), 4);
}

// ---- docs/performance.md, "Trace, print and interpret"

TEST(PerformancePage, TheTracedChainHasFourOpsPerStep) {
  constexpr std::int64_t steps = 40;
  const Graph g = trace([](VmemRef<const float, 16, 8> x, VmemRef<float, 16, 8> y) {
    // [snippet:chain]
    auto acc = x.at(0).load();
    for (std::int64_t k = 0; k < steps; ++k) {
      auto v = x.at(k % 16).load();   // view + load
      acc = acc * v + v;              // mul, add
      y.at(k % 16).store(acc);        // view + store
    }
    // [/snippet]
  });
  EXPECT_EQ(g.num_ops(), static_cast<std::size_t>(4 * steps + 1));
  // And it computes what it says: acc = acc * v + v over the rows in turn.
  std::vector<float> xs(16 * 8);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 3) * 0.5f;
  Buffer x = Buffer::from(Shape{16, 8}, xs), y(DType::f32, Shape{16, 8});
  interpret(g, x, y);
  std::vector<float> acc(xs.begin(), xs.begin() + 8), want(16 * 8);
  for (std::int64_t k = 0; k < steps; ++k)
    for (std::int64_t c = 0; c < 8; ++c) {
      const float v = xs[static_cast<std::size_t>((k % 16) * 8 + c)];
      acc[static_cast<std::size_t>(c)] = acc[static_cast<std::size_t>(c)] * v + v;
      want[static_cast<std::size_t>((k % 16) * 8 + c)] = acc[static_cast<std::size_t>(c)];
    }
  EXPECT_EQ(y.to_vector<float>(), want);
}

TEST(Docs, OutputsMatchThePages) { refx_docs::expect_outputs_match(__FILE__); }

}  // namespace
