// Forwarded copies (passes/forward_copies.hpp): a local copy that only stages
// a block moves nothing, and the loads after its wait read its source (a
// fetch) or the store before it writes its destination (a write-back). Each
// kernel runs with the pass on and off, and every argument ends
// bit-identical; the kernels that stage a block for another reader too (a
// partial load, a copy of the staging region, the destination read before
// the copy lands, a source written in the kernel, a staging Ref the caller
// reads) keep their copies, and still give the copies' results.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "support/graph_testing.hpp"
#include "support/runtime_testing.hpp"
#include <refx/explore.hpp>
#include <refx/pipeline.hpp>
#include <refx/predict.hpp>
#include <refx/runtime/runtime.hpp>

using namespace refx;
using namespace refx::testing;
using namespace refx::graph_testing;

namespace {

passes::Options copying() {
  passes::Options o;
  o.forward_copies = false;
  return o;
}

passes::Options forwarding() { return passes::Options{}; }  // forward_copies is on by default

/// The forwarded copies among the live ops of `g`.
std::size_t forwarded(const Graph& g) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < g.num_blocks(); ++b)
    for (OpId o : g.block(static_cast<BlockId>(b)).ops)
      n += g.op(o).prim == &prim::dma_start && prim::dma_start_attrs(g, g.op(o)).forwarded ? 1 : 0;
  return n;
}

/// The live loads and fused loops of `g` that read or write a Vmem Ref.
std::size_t vmem_accesses(const Graph& g) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < g.num_blocks(); ++b)
    for (OpId o : g.block(static_cast<BlockId>(b)).ops) {
      const Op& op = g.op(o);
      if (op.prim == &prim::dma_start || op.prim == &prim::dma_wait) continue;
      for (ViewId v : g.views(op)) n += g.type(g.view(v).ref).space == MemorySpace::vmem ? 1 : 0;
    }
  return n;
}

/// Traces `f`, compiles it with and without forwarding, runs both on copies
/// of `args` and checks every argument ends bit-identical. Returns the
/// forwarded graph; `args` holds its results.
template <class F>
Graph forwarded_matches_copying(F&& f, std::vector<Buffer>& args) {
  Compiled g = passes_match(std::forward<F>(f), args, copying(), forwarding());
  EXPECT_EQ(forwarded(g.reference), 0u);
  return std::move(g.changed);
}

float value(std::int64_t i) { return static_cast<float>((i * 37) % 101) * 0.25f - 12.0f; }

constexpr std::int64_t kRows = 64, kCols = 128, kBlock = 8;

// z = x * 2 + 1 in row blocks: every fetch and every write-back is
// forwarded, the body's one pass reads x and writes z (no Vmem access is
// left outside the copies), and z is the host's.
TEST(ForwardCopies, AnElementwisePipelineIsOnePass) {
  const auto f = [](HbmRef<const float, kRows, kCols> x, HbmRef<float, kRows, kCols> z) {
    const auto rows = [](std::int64_t i) { return std::array{i, std::int64_t{0}}; };
    emit_pipeline(grid(kRows / kBlock), [](VmemRef<const float, kBlock, kCols> xb, VmemRef<float, kBlock, kCols> zb) {
      zb.store(xb.load() * 2.0f + 1.0f);
    })(in(x, block<kBlock, kCols>(rows)), out(z, block<kBlock, kCols>(rows)));
  };
  std::vector<float> x(kRows * kCols);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = value(static_cast<std::int64_t>(i));
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{kRows, kCols}, x));
  args.emplace_back(DType::f32, Shape{kRows, kCols});
  args[1].fill_zero();
  const Graph g = forwarded_matches_copying(f, args);
  EXPECT_EQ(forwarded(g), 2 * static_cast<std::size_t>(kRows / kBlock)) << to_text(g);
  EXPECT_EQ(vmem_accesses(g), 0u) << to_text(g);
  const std::vector<float> z = contents<float>(args[1]);
  for (std::size_t i = 0; i < z.size(); ++i) ASSERT_EQ(z[i], x[i] * 2.0f + 1.0f) << i;
}

// A revisited output (the block stays for four steps and the body adds into
// it) and a scratch accumulator: only the last store before each write-back
// goes to z; the earlier ones, which the body reads back, stay in Vmem.
TEST(ForwardCopies, RevisitedOutputsForwardOnlyTheLastStore) {
  const auto f = [](HbmRef<const std::int32_t, 8, 32> x, HbmRef<std::int32_t, 2, 32> z) {
    const auto quarter = [](std::int64_t i) { return std::array{i / 4, std::int64_t{0}}; };
    const auto each = [](std::int64_t i) { return std::array{i, std::int64_t{0}}; };
    emit_pipeline(grid(8), [](VmemRef<const std::int32_t, 1, 32> xb, VmemRef<std::int32_t, 1, 32> zb) {
      if (program_id(0) % 4 == 0) zb.store(xb.load());
      else zb.store(zb.load() + xb.load());
    })(in(x, block<1, 32>(each)), out(z, block<1, 32>(quarter)));
  };
  std::vector<std::int32_t> x(8 * 32);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int32_t>(i * 3 % 17);
  std::vector<Buffer> args;
  args.push_back(make_buffer<std::int32_t>(Shape{8, 32}, x));
  args.emplace_back(DType::i32, Shape{2, 32});
  args[1].fill_zero();
  const Graph g = forwarded_matches_copying(f, args);
  EXPECT_EQ(forwarded(g), 8u + 2u) << to_text(g);  // 8 fetches, 2 write-backs
  const std::vector<std::int32_t> z = contents<std::int32_t>(args[1]);
  for (std::int64_t r = 0; r < 2; ++r)
    for (std::int64_t c = 0; c < 32; ++c) {
      std::int32_t want = 0;
      for (std::int64_t i = 4 * r; i < 4 * r + 4; ++i) want += x[static_cast<std::size_t>(i * 32 + c)];
      EXPECT_EQ(z[static_cast<std::size_t>(r * 32 + c)], want) << r << "," << c;
    }
}

constexpr std::int64_t kN = 16;
using HbmIn = HbmRef<const float, kN>;
using HbmOut = HbmRef<float, kN>;
using Vec = VmemRef<float, kN>;

/// Runs `k` (over x, z and w, each of kN f32) with forwarding on and off,
/// expects `n` forwarded copies and the same bits either way.
template <class K>
void check_forwarded(K k, std::size_t n, const char* what) {
  SCOPED_TRACE(what);
  std::vector<float> x(kN);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = value(static_cast<std::int64_t>(i));
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{kN}, x));
  args.push_back(make_buffer<float>(Shape{kN}, std::vector<float>(kN, 3.0f)));
  args.push_back(make_buffer<float>(Shape{kN}, std::vector<float>(kN, -1.0f)));
  const Graph g = forwarded_matches_copying(k, args);
  EXPECT_EQ(forwarded(g), n) << to_text(g);
}

TEST(ForwardCopies, KeepsTheCopiesWhoseStagingSomethingElseReads) {
  check_forwarded(
      [](HbmIn x, HbmOut z, HbmOut) {
        run_scoped([&](Vec s, Vec t, DmaSemaphore a, DmaSemaphore b) {
          auto in = make_async_copy(x, s, a);
          in.start();
          in.wait();
          t.store(s.load() + 1.0f);
          auto wb = make_async_copy(t, z, b);
          wb.start();
          wb.wait();
        });
      },
      2, "a fetch, a body and a write-back");
  check_forwarded(
      [](HbmIn x, HbmOut z, HbmOut) {
        run_scoped([&](Vec s, Vec t, DmaSemaphore b) {
          sync_copy(x, s);
          t.store(s.load() + 1.0f);
          t.at(ds(0, 4)).store(s.at(ds(4, 4)).load());
          auto wb = make_async_copy(t, z, b);
          wb.start();
          wb.wait();
        });
      },
      0, "a part of the staged block read, and a partial store last");
  check_forwarded(
      [](HbmIn x, HbmOut z, HbmOut w) {
        run_scoped([&](Vec s, Vec t, DmaSemaphore) {
          sync_copy(x, s);
          t.store(s.load() + 1.0f);
          sync_copy(t, z);
          sync_copy(t, w);
        });
      },
      1, "the staging region copied twice (only the fetch moves nothing)");
  check_forwarded(
      [](HbmIn x, HbmOut z, HbmOut w) {
        run_scoped([&](Vec s, Vec t, Vec u, DmaSemaphore) {
          sync_copy(x, s);
          t.store(s.load() * 3.0f);
          sync_copy(z, u);  // z's old contents, read before the write-back lands
          sync_copy(t, z);
          sync_copy(u, w);
        });
      },
      1, "the destination read between the store and the write-back (only the fetch moves nothing)");
  check_forwarded(
      [](HbmIn x, HbmOut z, HbmOut w) {
        run_scoped([&](Vec s, Vec t, DmaSemaphore) {
          sync_copy(x, s);
          t.store(s.load() - 2.0f);
          sync_copy(t, z);
          sync_copy(s, w);  // the staged block copied out again: a reader other than a load
        });
      },
      1, "the staged block read by a copy (only the write-back moves nothing)");
  check_forwarded(
      [](HbmOut x, HbmOut z, HbmOut) {
        run_scoped([&](Vec s, Vec t, DmaSemaphore) {
          sync_copy(x, s);
          t.store(s.load() + 4.0f);
          sync_copy(t, z);
          sync_copy(t, x);  // the fetch's source is written in the kernel; t is read after its write-back
        });
      },
      0, "a source the kernel writes, a staging region read after its write-back");
}

// A copy into a Vmem parameter: the caller reads it, so it moves its bytes.
TEST(ForwardCopies, ACopyIntoAParameterMovesItsBytes) {
  const auto f = [](HbmRef<const float, kN> x, Vec y) { sync_copy(x, y); };
  std::vector<float> x(kN);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = value(static_cast<std::int64_t>(i));
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{kN}, x));
  args.push_back(make_buffer<float>(Shape{kN}, std::vector<float>(kN, 0.0f)));
  const Graph g = forwarded_matches_copying(f, args);
  EXPECT_EQ(forwarded(g), 0u);
  EXPECT_EQ(contents<float>(args[1]), x);
}

// The pipeline on the threaded runtime, two devices, with the race detector
// and lazy copies (a copy lands only when waited): the forwarded kernel
// reports no race and gives the copying kernel's bits.
TEST(ForwardCopies, RuntimeWithRaceDetectorAndLazyCopiesMatchesCopies) {
  Watchdog dog(kTestLimit, "forwarded copies on the runtime");
  const auto f = [](HbmRef<const float, kRows, kCols> x, HbmRef<float, kRows, kCols> z) {
    const auto rows = [](std::int64_t i) { return std::array{i, std::int64_t{0}}; };
    emit_pipeline(grid(kRows / kBlock), [](VmemRef<const float, kBlock, kCols> xb, VmemRef<float, kBlock, kCols> zb) {
      zb.store(exp(xb.load() * 0.125f) - xb.load());
    })(in(x, block<kBlock, kCols>(rows)), out(z, block<kBlock, kCols>(rows)));
  };
  constexpr int devices = 2;
  for (const RuntimeOptions& options :
       {RuntimeOptions{.workers = 2}, RuntimeOptions{.workers = 2, .detect_races = true, .lazy_copies = true}}) {
    Runtime rt(options);
    auto fwd = kernel(f).passes(forwarding()).compile(Mesh{{"x", devices}}, {}, rt);
    auto copy = kernel(f).passes(copying()).compile(Mesh{{"x", devices}}, {}, rt);
    EXPECT_EQ(forwarded(fwd.graph()), 2 * static_cast<std::size_t>(kRows / kBlock));
    for (int call = 0; call < 3; ++call) {
      const auto gen = [call](int d, std::int64_t i) { return value(i + d * 7 + call); };
      const Array x = Array::generate<float>(devices, Shape{kRows, kCols}, gen, rt);
      const auto want = copy(x);
      const auto got = fwd(x);
      for (int d = 0; d < devices; ++d) EXPECT_EQ(got[0].to_host<float>(d), want[0].to_host<float>(d)) << d;
    }
  }
}

// A copy's wait does not overwrite its destination: device 0 copies x into
// its output, and the wait after it takes the peers' accumulating copies
// into the same region, which add to what the first copy left. That copy
// moves its bytes.
TEST(ForwardCopies, AWaitForAPeersAccumulationDoesNotEndTheDestination) {
  Watchdog dog(kTestLimit, "a fetch before accumulations");
  static constexpr int devices = 3;
  const auto f = [](HbmRef<const float, kN> x, HbmRef<float, kN> y) {
    const auto me = axis_index("x");
    run_scoped([&](RegularSemaphore turn, DmaSemaphore send, DmaSemaphore recv) {
      when(me == 0, [&] {
        sync_copy(x, y);
        semaphore_signal(turn, 1, DeviceId(1));
        for (int k = 1; k < devices; ++k) make_async_copy(x, y, recv).wait();
      });
      when(me > 0, [&] {
        semaphore_wait(turn, 1);
        const auto c = make_async_remote_copy(x, y, send, recv, DeviceId(0));
        c.start(Accumulate{CopyReduce::sum});
        c.wait_send();
        when(me + 1 < devices, [&] { semaphore_signal(turn, 1, DeviceId(me + 1)); });
      });
    });
  };
  Runtime rt(RuntimeOptions{.workers = 2});
  auto exe = kernel(f).compile(Mesh{{"x", devices}}, {}, rt);
  EXPECT_EQ(forwarded(exe.graph()), 0u) << to_text(exe.graph());
  const auto gen = [](int d, std::int64_t i) { return value(i) + static_cast<float>(d); };
  const auto y = exe(Array::generate<float>(devices, Shape{kN}, gen, rt))[0].to_host<float>(0);
  for (std::int64_t i = 0; i < kN; ++i) EXPECT_EQ(y[static_cast<std::size_t>(i)], gen(0, i) + gen(1, i) + gen(2, i)) << i;
}

// The elementwise pipeline of the runtime test, on `devices` devices.
auto pipelined_kernel() {
  return [](HbmRef<const float, kRows, kCols> x, HbmRef<float, kRows, kCols> z) {
    const auto rows = [](std::int64_t i) { return std::array{i, std::int64_t{0}}; };
    emit_pipeline(grid(kRows / kBlock), [](VmemRef<const float, kBlock, kCols> xb, VmemRef<float, kBlock, kCols> zb) {
      zb.store(xb.load() * 2.0f + 1.0f);
    })(in(x, block<kBlock, kCols>(rows)), out(z, block<kBlock, kCols>(rows)));
  };
}

// The runtime counts a forwarded copy as the kernel wrote it: the copies
// and bytes of a call are the copying kernel's, and `forwarded` says how many
// moved nothing.
TEST(ForwardCopies, TheRuntimeCountsForwardedCopiesAsWritten) {
  Watchdog dog(kTestLimit, "forwarded copies counted");
  constexpr int devices = 2;
  constexpr std::int64_t copies = 2 * (kRows / kBlock) * devices, bytes = 2 * kRows * kCols * 4 * devices;
  for (const RuntimeOptions& options : {RuntimeOptions{.workers = 2}, RuntimeOptions{.workers = 2, .lazy_copies = true}}) {
    LaunchStats stats[2];
    for (const bool fwd : {false, true}) {
      Runtime rt(options);
      auto exe = kernel(pipelined_kernel()).passes(fwd ? forwarding() : copying()).compile(Mesh{{"x", devices}}, {}, rt);
      const Array x = Array::generate<float>(devices, Shape{kRows, kCols}, [](int d, std::int64_t i) { return value(i + d); }, rt);
      for (int call = 0; call < 2; ++call) exe(x)[0].block_until_ready();
      stats[fwd] = rt.totals();
    }
    EXPECT_EQ(stats[0].copies, 2 * copies);
    EXPECT_EQ(stats[0].bytes_copied, 2 * bytes);
    EXPECT_EQ(stats[0].forwarded, 0);
    EXPECT_EQ(stats[1].copies, stats[0].copies);
    EXPECT_EQ(stats[1].bytes_copied, stats[0].bytes_copied);
    EXPECT_EQ(stats[1].forwarded, 2 * copies);
  }
}

// Options::forward_copies_max_bytes: a copy larger than it keeps moving
// (the runtime overlaps it with the body on another worker).
TEST(ForwardCopies, CopiesAboveTheLimitKeepMoving) {
  constexpr std::size_t block_bytes = kBlock * kCols * sizeof(float);
  for (const std::size_t limit : {block_bytes - 1, block_bytes}) {
    passes::Options o = forwarding();
    o.forward_copies_max_bytes = limit;
    Graph g = trace(pipelined_kernel());
    passes::run_pipeline(g, o);
    EXPECT_EQ(forwarded(g), limit < block_bytes ? 0u : 2 * static_cast<std::size_t>(kRows / kBlock)) << limit;
  }
}

// predict() and refx::explore run the kernel as written: the forwarded
// Executable keeps its copying program (as_written), and the prediction and
// the explored schedules are the copying kernel's.
TEST(ForwardCopies, PredictAndExploreRunTheCopiesAsWritten) {
  Watchdog dog(kTestLimit, "forwarded copies predicted and explored");
  constexpr int devices = 2;
  Runtime rt(RuntimeOptions{.workers = 2});
  auto fwd = kernel(pipelined_kernel()).passes(forwarding()).compile(Mesh{{"x", devices}}, {}, rt);
  auto copy = kernel(pipelined_kernel()).passes(copying()).compile(Mesh{{"x", devices}}, {}, rt);
  ASSERT_EQ(forwarded(fwd.graph()), 2 * static_cast<std::size_t>(kRows / kBlock));
  EXPECT_EQ(forwarded(fwd.written_program()->graph), 0u);
  EXPECT_EQ(to_text(fwd.written_program()->graph), to_text(copy.graph()));
  EXPECT_EQ(copy.written_program(), copy.shared_program());  // nothing forwarded: itself

  const auto args = [&] {
    return std::vector<Array>{Array::generate<float>(devices, Shape{kRows, kCols}, [](int, std::int64_t i) { return value(i); }, rt),
                              Array::empty(devices, DType::f32, Shape{kRows, kCols}, rt)};
  };
  const Prediction pf = predict(fwd, targets::v5e(), args()), pc = predict(copy, targets::v5e(), args());
  EXPECT_EQ(pf.seconds(), pc.seconds());
  EXPECT_EQ(pf.copies.size(), pc.copies.size());
  EXPECT_EQ(pf.copies.size(), 2 * static_cast<std::size_t>(kRows / kBlock) * devices);

  const ExploreOptions o{.runs = 20, .seed = 5, .progress = false};
  const ExploreReport ef = explore(fwd, args(), o), ec = explore(copy, args(), o);
  EXPECT_TRUE(ef.ok()) << ef;
  EXPECT_EQ(ef.max_steps, ec.max_steps);
  EXPECT_EQ(ef.distinct, ec.distinct);
}

}  // namespace
