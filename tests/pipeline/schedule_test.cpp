// The generated schedule itself: the order of block copies and waits of the
// copy kernel equals the step table of pallas-pipelining.md B.2, and a
// pipeline runs while a remote copy is in flight (the design note's kernel)
// with the race detector following every copy.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <refx/pipeline.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

namespace {
using namespace refx;
using I = std::int64_t;

// "S<d>" for a copy start, "W<d>" for a wait, in recording order; d numbers
// the descriptors in the order they were first used.
std::string copy_sequence(const Graph& g) {
  std::map<std::int64_t, int> number;
  std::string out;
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    const bool start = op.prim == &prim::dma_start;
    if (!start && op.prim != &prim::dma_wait) continue;
    const std::int64_t id = start ? prim::dma_start_attrs(g, op).descriptor : prim::dma_wait_attrs(g, op).descriptor;
    const int n = number.emplace(id, static_cast<int>(number.size())).first->second;
    out += (start ? "S" : "W") + std::to_string(n) + " ";
  }
  return out;
}

// B.2's copy kernel, grid (4,), n = 2, in refx's order within a step (waits
// first, then the starts that overlap the body; pipeline.hpp says why).
// Descriptors in order of first use: in0=0, in1=1, out0=2, in2=3, out1=4,
// in3=5, out2=6, out3=7. The copies overlapping body s are the fetch of
// step s + 1 and the write-back of step s - 1, as in B.2's table.
TEST(Schedule, CopyKernelMatchesTheStepTable) {
  const Graph g = trace([](HbmRef<const float, 4, 8> a, HbmRef<float, 4, 8> b) {
    const auto row = [](I i) { return std::array{i, I{0}}; };
    emit_pipeline(grid(4), [](VmemRef<const float, 1, 8> x, VmemRef<float, 1, 8> y) { y.store(x.load()); })(
        in(a, block<1, 8>(row)), out(b, block<1, 8>(row)));
  });
  //                   pro | step 0 | step 1        | step 2        | step 3           | epilogue
  EXPECT_EQ(copy_sequence(g), "S0 W0 S1 W1 S2 S3 W2 W3 S4 S5 W4 W5 S6 S7 W6 W7 ");
}

// Same with in map i -> i / 2 (0,0,1,1): fetches at the prologue and step 1
// only, waits at steps 0 and 2 only.
TEST(Schedule, RepeatedInputIndexSkipsFetchAndWait) {
  const Graph g = trace([](HbmRef<const float, 2, 8> a, HbmRef<float, 4, 8> b) {
    emit_pipeline(grid(4), [](VmemRef<const float, 1, 8> x, VmemRef<float, 1, 8> y) { y.store(x.load()); })(
        in(a, block<1, 8>([](I i) { return std::array{i / 2, I{0}}; })),
        out(b, block<1, 8>([](I i) { return std::array{i, I{0}}; })));
  });
  // in0=0, out0=1, in1=2, out1=3, out2=4, out3=5
  //                   pro | step 0 | step 1     | step 2  | step 3     | epilogue
  EXPECT_EQ(copy_sequence(g), "S0 W0 S1 S2 W1 W2 S3 W3 S4 S5 W4 W5 ");
}

// The design note's kernel: a remote copy of x in flight while the pipeline
// computes z = x + 1; then wait_send / wait_recv. Checked mode: no race.
constexpr int N = 4;
constexpr I R = 16, C = 64, BR = 4;
TEST(Schedule, PipelineWhileARemoteCopyIsInFlight) {
  const auto k = [](HbmRef<const float, R, C> x, HbmRef<float, R, C> y, HbmRef<float, R, C> z) {
    auto me = axis_index("x");
    auto right = (me + 1) % N, left = (me + N - 1) % N;
    auto barrier = get_barrier_semaphore();
    semaphore_signal(barrier, 1, left);
    semaphore_signal(barrier, 1, right);
    semaphore_wait(barrier, 2);
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto copy = make_async_remote_copy(x, y, send, recv, right);
      copy.start();
      const auto rows = [](I i) { return std::array{i, I{0}}; };
      emit_pipeline(grid(R / BR), [](VmemRef<const float, BR, C> xb, VmemRef<float, BR, C> zb) { zb.store(xb.load() + 1.0f); })(
          in(x, block<BR, C>(rows)), out(z, block<BR, C>(rows)));
      copy.wait_send();
      copy.wait_recv();
    });
  };
  const auto value = [](int d, I i) { return float(d * 10000 + i); };
  for (const bool detect : {false, true}) {
    Runtime rt(RuntimeOptions{.detect_races = detect});
    const Executable exe = kernel(k).collective_id(0).compile(Mesh{{"x", N}}, {}, rt);
    const auto out = exe(Array::generate<float>(N, Shape{R, C}, value, rt));
    for (int d = 0; d < N; ++d) {
      const auto y = out[0].to_host<float>(d), z = out[1].to_host<float>(d);
      for (I i = 0; i < R * C; ++i) {
        EXPECT_EQ(y[static_cast<std::size_t>(i)], value((d + N - 1) % N, i)) << d << " " << i;
        EXPECT_EQ(z[static_cast<std::size_t>(i)], value(d, i) + 1.0f) << d << " " << i;
      }
    }
  }
}

}  // namespace
