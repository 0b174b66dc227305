// Many calls of one executable: >= 100 dispatched back to back before any
// result is read (every result checked, the last one included), and chains
// where each call's output is the next call's input (dispatched without
// waiting; the final result is checked against the host doing the same).

#include <gtest/gtest.h>

#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

constexpr int kCalls = 120;
const std::vector<int> kSizes{2, 3, 5, 8};

template <class T>
using Vec = Ref<T, extents<dyn>, Hbm>;

/// An in-place all-reduce kernel with an explicit algorithm.
template <class T>
Executable all_reduce_kernel(int n, std::int64_t m, Algorithm alg, Direction dir = Direction::unidirectional,
                             ReduceOp op = ReduceOp::sum) {
  return kernel([=](Vec<T> x) { collectives::all_reduce(x, "x", op, dir, alg); }).compile(Mesh{{"x", n}}, {Shape{m}});
}

class BackToBack : public ::testing::TestWithParam<int> {};

// kCalls dispatches of one all-reduce program on one input; results are read
// only after all were dispatched.
TEST_P(BackToBack, AllReduceProgram) {
  const int n = GetParam();
  Watchdog dog(kTestLimit, "back-to-back all_reduce");
  const std::int64_t m = 33;
  const auto exe = collectives::all_reduce_program<std::int32_t>(Mesh{{"x", n}}, m);
  const auto host = inputs<std::int32_t>(n, m);
  const Array x = array_of(host, Shape{m});
  std::vector<Array> outs;
  for (int i = 0; i < kCalls; ++i) outs.push_back(exe(x)[0]);
  const auto want = reduce(host, ReduceOp::sum);
  ASSERT_TRUE(matches(outs.back().to_host<std::int32_t>(n - 1), want, "last call, last device"));
  for (int i = 0; i < kCalls; ++i)
    for (int d = 0; d < n; ++d)
      ASSERT_TRUE(matches(outs[static_cast<std::size_t>(i)].to_host<std::int32_t>(d), want,
                          "call " + std::to_string(i) + ", device " + std::to_string(d)));
}

// The out-of-place program called kCalls times into one existing out (as MPI
// reuses its recvbuf), alternating two inputs: each call sees the previous
// one's result in out, and must overwrite all of it.
TEST_P(BackToBack, AllReduceProgramIntoOneOutput) {
  const int n = GetParam();
  Watchdog dog(kTestLimit, "back-to-back all_reduce into one output");
  for (std::int64_t m : {33, 9000, 300000}) {  // one-shot, direct (N > 2) or the ring, the ring
    const auto exe = collectives::all_reduce_program<std::int32_t>(Mesh{{"x", n}}, m);
    const auto a = inputs<std::int32_t>(n, m), b = inputs<std::int32_t>(n, m, 5);
    const Array xa = array_of(a, Shape{m}), xb = array_of(b, Shape{m});
    const Array out = exe(xa)[0];
    for (int i = 0; i < kCalls; ++i) exe.call_in_place({i % 2 ? xb : xa, out});
    const auto want = reduce((kCalls - 1) % 2 ? b : a, ReduceOp::sum);  // what the last call reduced
    for (int d = 0; d < n; ++d)
      ASSERT_TRUE(matches(out.to_host<std::int32_t>(d), want, "m " + std::to_string(m) + ", device " + std::to_string(d)));
  }
}

TEST_P(BackToBack, RingAllReduceBothDirections) {
  const int n = GetParam();
  Watchdog dog(kTestLimit, "back-to-back ring all_reduce");
  const std::int64_t m = 33;
  for (Direction dir : {Direction::unidirectional, Direction::bidirectional}) {
    const auto exe = all_reduce_kernel<float>(n, m, Algorithm::ring, dir);
    const auto host = inputs<float>(n, m);
    std::vector<Array> xs;
    for (int i = 0; i < kCalls; ++i) {
      xs.push_back(array_of(host, Shape{m}));
      exe.call_in_place({xs.back()});
    }
    const auto want = reduce(host, ReduceOp::sum);
    for (int i = 0; i < kCalls; ++i) {
      for (int d = 0; d < n; ++d)
        ASSERT_TRUE(matches(xs[static_cast<std::size_t>(i)].to_host<float>(d), want,
                            std::string(name_of(dir)) + " call " + std::to_string(i) + ", device " + std::to_string(d)));
      ASSERT_TRUE(bitwise_identical_across_devices(xs[static_cast<std::size_t>(i)]));
    }
  }
}

TEST_P(BackToBack, AllGatherReduceScatterAllToAll) {
  const int n = GetParam();
  Watchdog dog(kTestLimit, "back-to-back gather / scatter / all-to-all");
  const Mesh mesh{{"x", n}};
  const std::int64_t m = 13;
  const auto gather = collectives::all_gather_program<std::int64_t>(mesh, m);
  const auto scatter = collectives::reduce_scatter_program<std::int64_t>(mesh, m, {.op = ReduceOp::max});
  const auto a2a = collectives::all_to_all_program<std::int64_t>(mesh, m);
  const auto host = inputs<std::int64_t>(n, m);
  const auto host2 = inputs<std::int64_t>(n, n * m, 4);
  const Array x = array_of(host, Shape{m}), x2 = array_of(host2, Shape{n, m});
  std::vector<Array> g, s, t;
  for (int i = 0; i < kCalls; ++i) {  // interleaved: three programs queued on one runtime
    g.push_back(gather(x)[0]);
    s.push_back(scatter(x)[0]);
    t.push_back(a2a(x2)[0]);
  }
  std::vector<std::int64_t> all;
  for (const auto& b : host) all.insert(all.end(), b.begin(), b.end());
  const auto reduced = reduce(host, ReduceOp::max);
  for (int i : {0, kCalls / 2, kCalls - 1})
    for (int d = 0; d < n; ++d) {
      const std::string at = "call " + std::to_string(i) + ", device " + std::to_string(d);
      ASSERT_TRUE(matches(g[static_cast<std::size_t>(i)].to_host<std::int64_t>(d), all, "all_gather " + at));
      const Chunk k = chunk_of(m, n, d);
      ASSERT_TRUE(matches(s[static_cast<std::size_t>(i)].to_host<std::int64_t>(d), 0, reduced, k.start, k.len, "reduce_scatter " + at));
      std::vector<std::int64_t> want;
      for (const auto& xj : host2) want.insert(want.end(), xj.begin() + d * m, xj.begin() + (d + 1) * m);
      ASSERT_TRUE(matches(t[static_cast<std::size_t>(i)].to_host<std::int64_t>(d), want, "all_to_all " + at));
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, BackToBack, ::testing::ValuesIn(kSizes), DeviceCountName());

class Chain : public ::testing::TestWithParam<int> {};

// y <- ppermute(y, +1), kCalls times: device d ends with device d - kCalls's block.
TEST_P(Chain, PermuteOutputFeedsTheNextCall) {
  const int n = GetParam();
  Watchdog dog(kTestLimit, "permute chain");
  const std::int64_t m = 9;
  const auto exe = kernel([](Vec<const float> x, Vec<float> y) { ppermute_done(ppermute_start(x, y, "x", 1)); })
                       .compile(Mesh{{"x", n}}, {Shape{m}, Shape{m}});
  const auto host = inputs<float>(n, m);
  Array y = array_of(host, Shape{m});
  for (int i = 0; i < kCalls; ++i) y = exe(y)[0];
  for (int d = 0; d < n; ++d)
    ASSERT_TRUE(matches(y.to_host<float>(d), host[static_cast<std::size_t>(permute_source(d, kCalls, n))], "device " + std::to_string(d)));
}

/// Integer-valued doubles: the first sum is exact, and from then on every
/// device holds one value v, so any summation order computes the same
/// (((v + v) + v) + ...) the host does.
std::vector<double> chain_reference(const std::vector<std::vector<double>>& host, int calls) {
  std::vector<double> v = reduce(host, ReduceOp::sum).value;
  const int n = static_cast<int>(host.size());
  for (int c = 1; c < calls; ++c)
    for (double& e : v) {
      double acc = e;
      for (int j = 1; j < n; ++j) acc += e;
      e = acc;
    }
  return v;
}

std::vector<std::vector<double>> integer_valued(int n, std::int64_t m) {
  std::vector<std::vector<double>> out(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d)
    for (std::int64_t i = 0; i < m; ++i) out[static_cast<std::size_t>(d)].push_back(static_cast<double>(input<std::int32_t>(d, i)));
  return out;
}

// y <- all_reduce(y), kCalls times, out of place, dispatched without waiting:
// the ring reading x at kernel entry (no handshake before its first step),
// and after other work (with one).
TEST_P(Chain, AllReduceOutOfPlace) {
  const int n = GetParam();
  Watchdog dog(kTestLimit, "all_reduce chain");
  const std::int64_t m = 21;
  const auto at_entry = kernel([](Vec<const double> x, Vec<double> out) {
                          collectives::all_reduce(x, out, "x", ReduceOp::sum, Direction::bidirectional, Algorithm::ring);
                        }).compile(Mesh{{"x", n}}, {Shape{m}, Shape{m}});
  const auto after_work = kernel([m](Vec<const double> x, Vec<double> out) {
                            // Junk in out first: the ring must not read it.
                            run_scoped({Shape{m}}, [&](Ref<double, extents<dyn>, Vmem> junk) {
                              junk.store(junk.load() * 0.0 - 1.0);
                              sync_copy(junk, out);
                            });
                            collectives::all_reduce(x, out, "x", ReduceOp::sum, Direction::unidirectional, Algorithm::ring);
                          }).compile(Mesh{{"x", n}}, {Shape{m}, Shape{m}});
  const auto host = integer_valued(n, m);
  Array y = array_of(host, Shape{m});
  for (int i = 0; i < kCalls; ++i) y = (i % 2 ? after_work : at_entry)(y)[0];
  const auto want = chain_reference(host, kCalls);
  for (int d = 0; d < n; ++d) ASSERT_TRUE(matches(y.to_host<double>(d), want, "device " + std::to_string(d)));
}

// x <- all_reduce(x) in place, kCalls times on one Array.
TEST_P(Chain, AllReduceInPlace) {
  const int n = GetParam();
  Watchdog dog(kTestLimit, "in-place all_reduce chain");
  const std::int64_t m = 21;
  const auto host = integer_valued(n, m);
  const auto want = chain_reference(host, kCalls);
  for (Algorithm alg : {Algorithm::ring, Algorithm::automatic}) {
    const auto exe = alg == Algorithm::automatic
                         ? collectives::all_reduce_program<double>(Mesh{{"x", n}}, m, {.in_place = true})
                         : all_reduce_kernel<double>(n, m, alg);
    Array x = array_of(host, Shape{m});
    for (int i = 0; i < kCalls; ++i) exe.call_in_place({x});
    for (int d = 0; d < n; ++d)
      ASSERT_TRUE(matches(x.to_host<double>(d), want, std::string(name_of(alg)) + " device " + std::to_string(d)));
  }
}

// Each call adds 1 to this device's own row, then gathers in place: after k
// calls row j is device j's block + k everywhere, so every call moved fresh
// rows (a stale or doubly-applied one would be off by at least 1).
TEST_P(Chain, AllGatherInPlace) {
  const int n = GetParam();
  Watchdog dog(kTestLimit, "in-place all_gather chain");
  const std::int64_t m = 7;
  const auto host = inputs<std::int64_t>(n, m);
  for (Algorithm alg : {Algorithm::ring, Algorithm::direct}) {
    const auto exe = kernel([alg](Ref<std::int64_t, extents<dyn, dyn>, Vmem> x) {
                       const auto mine = x.at(axis_index("x"));
                       mine.store(mine.load() + std::int64_t{1});
                       collectives::all_gather_in_place(x, "x", alg);
                     }).compile(Mesh{{"x", n}}, {Shape{n, m}});
    std::vector<std::vector<std::int64_t>> start(static_cast<std::size_t>(n), std::vector<std::int64_t>(static_cast<std::size_t>(n * m)));
    std::vector<std::int64_t> want;
    for (int d = 0; d < n; ++d) {
      std::copy(host[d].begin(), host[d].end(), start[d].begin() + d * m);
      for (std::int64_t v : host[d]) want.push_back(v + kCalls);
    }
    Array x = array_of(start, Shape{n, m});
    for (int i = 0; i < kCalls; ++i) exe.call_in_place({x});
    for (int d = 0; d < n; ++d)
      ASSERT_TRUE(matches(x.to_host<std::int64_t>(d), want, std::string(name_of(alg)) + " device " + std::to_string(d)));
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Chain, ::testing::ValuesIn(kSizes), DeviceCountName());

// The direct all-reduce called many times (small chunks, many devices): the
// interleavings that expose a receive-semaphore mix-up show up here.
TEST(DirectAllReduce, ManyCallsAreAllExact) {
  Watchdog dog(kTestLimit, "direct all_reduce stress");
  for (int n : {3, 5, 8}) {
    const std::int64_t m = 7;
    const auto exe = all_reduce_kernel<std::int32_t>(n, m, Algorithm::direct);
    const auto host = inputs<std::int32_t>(n, m);
    const auto want = reduce(host, ReduceOp::sum);
    std::vector<Array> xs;
    for (int i = 0; i < 200; ++i) {
      xs.push_back(array_of(host, Shape{m}));
      exe.call_in_place({xs.back()});
    }
    for (std::size_t i = 0; i < xs.size(); ++i)
      for (int d = 0; d < n; ++d)
        ASSERT_TRUE(matches(xs[i].to_host<std::int32_t>(d), want,
                            "N" + std::to_string(n) + " call " + std::to_string(i) + ", device " + std::to_string(d)));
  }
}

}  // namespace
