// The compiled sources of fragments that pages quote and that no example
// holds: docs/graph.md (and the output it shows), docs/effects.md section 2,
// docs/performance.md, and docs/tutorial.md's "What can go wrong" (each
// mistake inside an otherwise correct kernel of the tutorial). Each region
// between [snippet:NAME] markers is quoted verbatim by a page
// (docs.Docs.FragmentsQuoteACompiledSourceVerbatim); each DOC_OUTPUT("NAME")
// is shown by one after <!-- output: tests/docs/fragments_test.cpp#NAME -->,
// line numbers as N (docs.Docs.OutputsMatchThePages, below). One translation
// unit for all of them keeps the build short. The tutorial's complete
// programs run as docs.Samples.tutorial_*.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <span>
#include <stdexcept>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/explore.hpp>
#include <refx/extend.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/passes/pipeline.hpp>

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

// ---- docs/performance.md, "Trace and compile time as the graph grows"

TEST(PerformancePage, TheTracedChainHasFourOpsPerStep) {
  constexpr std::int64_t steps = 40;
  const Graph g = trace([](VmemRef<const float, 16, 8> x, VmemRef<float, 16, 8> y) {
    auto acc = x.at(0).load();
    for (std::int64_t k = 0; k < steps; ++k) {
      auto v = x.at(k % 16).load();   // view + load
      acc = acc * v + v;              // mul, add
      y.at(k % 16).store(acc);        // view + store
    }
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

// ---- docs/tutorial.md, "What can go wrong"

constexpr int kN = 4;

/// What `f` throws (a refx::Error), with a newline, as the page shows it.
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.what()) + "\n";
  }
  return "no error\n";
}

// -- tutorial 1. Refs and scopes

constexpr std::int64_t kCols = 128;

DOC_OUTPUT("ref-after-scope") {
  return message_of([] {
    (void)trace([](VmemRef<const float, kCols> x, VmemRef<float, kCols> y) {
      // [snippet:ref-after-scope]
      VmemRef<float, kCols> kept;
      run_scoped([&](VmemRef<float, kCols> scratch) {
        scratch.store(x.load());
        kept = scratch;  // the handle outlives the scope; the buffer does not
      });
      y.store(kept.load());
      // [/snippet]
    });
  });
}

// -- tutorial 2. A first remote copy

constexpr std::int64_t kBlock = 1024;

DOC_OUTPUT("byte-count") {
  return message_of([] {
    (void)kernel([](HbmRef<const float, kBlock> x, HbmRef<float, kBlock> y) {
      auto right = (axis_index("x") + 1) % axis_size("x");
      run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
        // [snippet:byte-count]
        auto half = make_async_remote_copy(x.at(ds(0, kBlock / 2)), y.at(ds(0, kBlock / 2)), send, recv, right);
        half.start();
        auto whole = make_async_remote_copy(x, y, send, recv, right);
        whole.wait();  // waits for the bytes of all of x
        // [/snippet]
      });
    }).compile(Mesh{{"x", kN}});
  });
}

// -- tutorial 3. Semaphores and barriers

DOC_OUTPUT("half-barrier") {
  Runtime rt(RuntimeOptions{.workers = 2});
  const auto exchange = kernel([](VmemRef<const float, 256> x, VmemRef<float, 256> y) {
                          auto right = (axis_index("x") + 1) % kN;
                          // [snippet:half-barrier]
                          auto barrier = get_barrier_semaphore();
                          semaphore_signal(barrier, 1, right);
                          semaphore_wait(barrier, 2);  // only my left neighbour signals me
                          // [/snippet]
                          y.store(x.load());
                        })
                            .name("exchange")
                            .collective_id(0)
                            .compile(Mesh{{"x", kN}}, {}, rt);
  const Array x = Array::generate<float>(kN, Shape{256}, [](int, std::int64_t) { return 1; }, rt);
  return message_of([&] { exchange(x)[0].block_until_ready(); });
}

// -- tutorial 4. All-gather

constexpr std::int64_t kGather = 256;

DOC_OUTPUT("negative-slot") {
  Runtime rt(RuntimeOptions{.workers = 2});
  const auto gather_mean = kernel([](VmemRef<const float, kGather> x, VmemRef<float, kN, kGather> out,
                                     VmemRef<float, kGather> mean) {
                             auto me = axis_index("x");
                             auto right = (me + 1) % kN;
                             run_scoped([&](DmaSemaphore send, DmaSemaphores<kN - 1> recv) {
                               out.at(me).store(x.load());
                               for (int s = 0; s < kN - 1; ++s) {
                                 // [snippet:negative-slot]
                                 auto slot = (me - s) % kN;  // C++'s %: -1 for me = 0, s = 1
                                 // [/snippet]
                                 auto copy = make_async_remote_copy(out.at(slot), out.at(slot), send, recv.at(s), right);
                                 copy.start();
                                 copy.wait();
                               }
                               mean.store(reduce_sum<0>(out.load()) * (1.0f / kN));
                             });
                           })
                               .name("gather_mean")
                               .compile(Mesh{{"x", kN}}, {}, rt);
  const Array x = Array::generate<float>(kN, Shape{kGather}, [](int d, std::int64_t) { return d; }, rt);
  return message_of([&] { gather_mean(x)[0].block_until_ready(); });
}

// -- tutorial 5. Double buffering and the capacity handshake

constexpr std::int64_t kReduce = 512;

std::string race_without_capacity_handshake() {
  Runtime checked(RuntimeOptions{.detect_races = true});
  const auto exe = kernel([](VmemRef<const float, kReduce> x, VmemRef<float, kReduce> sum) {
                     auto right = (axis_index("x") + 1) % kN;
                     run_scoped([&](VmemRef<float, 2, kReduce> buf, DmaSemaphore send, DmaSemaphore recv) {
                       buf.at(0).store(x.load());
                       sum.store(0.0f);
                       for (int s = 0; s < kN - 1; ++s) {
                         // [snippet:no-capacity]
                         auto working = buf.at(s % 2), receiving = buf.at((s + 1) % 2);
                         auto copy = make_async_remote_copy(working, receiving, send, recv, right);
                         copy.start();
                         sum += working.load();
                         copy.wait();
                         // [/snippet]
                       }
                       sum += buf.at((kN - 1) % 2).load();
                     });
                   })
                       .name("all_reduce")
                       .compile(Mesh{{"x", kN}}, {}, checked);
  const Array x = Array::generate<float>(kN, Shape{kReduce}, [](int d, std::int64_t) { return d; }, checked);
  return message_of([&] { exe(x)[0].block_until_ready(); });
}

// The page shows the first line; the pairs that follow depend on timing.
DOC_OUTPUT("no-capacity") {
  const std::string m = race_without_capacity_handshake();
  return m.substr(0, m.find('\n') + 1);
}

TEST(TutorialPage, TheRaceNamesACopyIntoTheSlotAndTheReadOfIt) {
  // Which access of a pair is named first depends on which the detector saw
  // first: look for a line that names both, in either order.
  const std::string m = race_without_capacity_handshake();
  bool named = false;
  for (std::size_t at = 0; at < m.size() && !named;) {
    const std::size_t end = std::min(m.find('\n', at), m.size());
    const std::string_view line(m.data() + at, end - at);
    named = line.find("copy write into device ") != line.npos && line.find("read by device ") != line.npos &&
            line.find("copy read") == line.npos;
    at = end + 1;
  }
  EXPECT_TRUE(named) << m;
}

// -- tutorial 6. Reduce-scatter

constexpr std::int64_t kChunk = 256;

DOC_OUTPUT("receive-never-waited") {
  return message_of([] {
    (void)kernel([](HbmRef<float, kN, kChunk> x) {
      auto me = axis_index("x");
      auto left = (me + kN - 1) % kN, right = (me + 1) % kN;
      run_scoped([&](RegularSemaphore capacity, DmaSemaphore send, DmaSemaphore recv) {
        for (int s = 0; s < kN - 1; ++s) {
          semaphore_signal(capacity, 1, left);
          semaphore_wait(capacity, 1);
          auto out_chunk = (me + 2 * kN - s - 1) % kN;
          // [snippet:receive-never-waited]
          auto copy = make_async_remote_copy(x.at(out_chunk), x.at(out_chunk), send, recv, right);
          copy.start(accumulate);
          copy.wait_send();
          // [/snippet]
        }
      });
    }).compile(Mesh{{"x", kN}});
  });
}

// -- tutorial 7. ppermute

DOC_OUTPUT("permute-into-itself") {
  return message_of([] {
    (void)kernel([](VmemRef<const float, kReduce> x, VmemRef<float, kReduce> sum) {
      run_scoped([&](DoubleBuffer<float, kReduce> buf) {
        buf.at(0).store(x.load());
        // [snippet:permute-into-itself]
        auto f = ppermute_start(buf.at(0), buf.at(0), "x", 1);
        // [/snippet]
        sum.store(buf.at(0).load());
        ppermute_done(f);
      });
    }).compile(Mesh{{"x", kN}});
  });
}

// -- tutorial 8. Ordered effects

DOC_OUTPUT("callback-throws") {
  Runtime rt(RuntimeOptions{.workers = 2});
  const auto exe = kernel([](VmemRef<const float, 8>) {
                     fori_loop(0, 2, [&](Scalar<std::int32_t> step) {
                       // [snippet:callback-throws]
                       io_callback(ordered, [](std::int32_t s) {
                         if (s == 1) throw std::runtime_error("disk full");
                       }, step);
                       // [/snippet]
                     });
                   }).compile(Mesh{{"x", kN}}, {}, rt);
  exe(Array::generate<float>(kN, Shape{8}, [](int, std::int64_t) { return 0; }, rt));
  const std::string first = message_of([&] { effects_barrier(rt); });
  const std::string second = message_of([&] { effects_barrier(rt); });  // reported once
  return second == "no error\n" ? first : "reported twice: " + second;
}

// -- tutorial 9. Reading the timeline

DOC_OUTPUT("timeline-write") {
  Runtime rt(RuntimeOptions{.workers = 2});
  const auto rotate_sum = kernel([](VmemRef<const float, kReduce> x, VmemRef<float, kReduce> sum) {
                            run_scoped([&](DoubleBuffer<float, kReduce> buf) {
                              buf.at(0).store(x.load());
                              sum.store(0.0f);
                              for (int s = 0; s < kN - 1; ++s) {
                                auto f = ppermute_start(buf.at(s % 2), buf.at((s + 1) % 2), "x", 1);
                                sum += buf.at(s % 2).load();
                                ppermute_done(f);
                              }
                              sum += buf.at((kN - 1) % 2).load();
                            });
                          })
                              .name("rotate_sum")
                              .compile(Mesh{{"x", kN}}, {}, rt);
  const Array x = Array::generate<float>(kN, Shape{kReduce}, [](int d, std::int64_t) { return d; }, rt);
  return message_of([&] {
    // [snippet:timeline-write]
    rt.start_timeline();
    const Array sum = rotate_sum(x)[0];
    rt.stop_timeline().write("/no/such/dir/rotate_sum.json");
    // [/snippet]
  });
}

// -- tutorial 13. Every schedule a kernel can meet

DOC_OUTPUT("explore-missing-barrier") {
  const auto exe = kernel([](HbmRef<const float, kCols> x, HbmRef<float, kCols> y) {
                     run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
                       const auto right = (axis_index("x") + 1) % axis_size("x");
                       auto c = make_async_remote_copy(x, y, send, recv, right);
                       c.start();
                       c.wait_send();
                       c.wait_recv();
                     });
                   })
                       .name("shift")
                       .collective_id(0)
                       .compile(Mesh{{"x", 3}});
  Array x = Array::generate<float>(3, Shape{kCols}, [](int d, std::int64_t i) { return d * 1000.0f + i; });
  Array y = Array::generate<float>(3, Shape{kCols}, [](int, std::int64_t) { return 0.0f; });
  // [snippet:explore-call]
  const ExploreReport r = explore(exe, {x, y}, {.strategy = ExploreStrategy::pct, .runs = 1000, .seed = 1});
  // in a GoogleTest: EXPECT_TRUE(r.ok()) << r;
  // [/snippet]
  if (!r.failure) return std::string("no failure\n");
  std::string text = r.failure->message + "\n";
  for (const std::string& line : r.failure->schedule) text += line + "\n";
  return text;
}

TEST(Docs, OutputsMatchThePages) { refx_docs::expect_outputs_match(__FILE__); }

}  // namespace
