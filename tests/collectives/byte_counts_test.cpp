// The runtime's byte counters (Runtime::totals(), a private Runtime per
// test) equal each algorithm's minimum exactly: no defensive copy anywhere.
// N devices, m elements of s bytes per device:
//   all_gather (block m)        local m + remote (N-1) m per device   N^2 m s
//   all_gather_in_place         remote (N-1) m per device             N (N-1) m s
//   all_to_all (N blocks of m)  the same                              N^2 m s
//   ring all_reduce, in place   every chunk is sent by N-1 devices in
//                               reduce-scatter, again in all-gather   2 (N-1) m s
//   direct all_reduce, in place round 1 + local combine + round 2     3 (N-1) m s
//   one-shot all_reduce, in place  x to every device (own: local),
//                               the result back into x          N (N+1) m s
//   reduce_scatter, in place    every chunk is sent by N-1 devices    (N-1) m s
//   ppermute                    one block per device                  N m s
//   collective_matmul (a: rows x k)  N-1 blocks of a per device       N (N-1) rows k s
// Out of place, no algorithm stages x. The ring reads x instead: a block
// arrives by a plain copy and its receiver adds its own chunk of x (a local
// copy), so the reduce-scatter half moves 2 (N-1) m s. The ring all_reduce:
// 3 (N-1) m s; the ring reduce_scatter: 2 (N-1) m s + m s (the reduced chunk
// out). The one-shot all_reduce moves what it moves in place (x to every
// slot, the result into out); the direct one copies each own chunk of x into
// out (+m s in all); the direct reduce_scatter (automatic for small x) copies
// each own chunk into its slot and the result out ((N+1) m s in all).
// Because every chunk is sent the same number of times, the totals are exact for sizes not divisible by N (and smaller than N) too;
// copy counts are checked where every chunk is non-empty.

#include <gtest/gtest.h>

#include "support/collectives_testing.hpp"
#include <refx/runtime/runtime.hpp>

namespace {
using namespace refx;
using namespace refx::testing;

using T = float;
constexpr std::int64_t S = sizeof(T);
constexpr int kCalls = 3;

template <class U>
using Vec = Ref<U, extents<dyn>, Hbm>;

struct Case {
  int n;
  std::int64_t m;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return "N" + std::to_string(info.param.n) + "_m" + std::to_string(info.param.m);
}

/// The runtime's counters over kCalls calls of f (each waits for its result).
template <class F>
LaunchStats measure(Runtime& rt, F&& f) {
  const StatsDelta delta(rt);
  for (int i = 0; i < kCalls; ++i) f();
  return delta.get();
}

class ByteCounts : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { dog_ = std::make_unique<Watchdog>(kTestLimit, case_name({GetParam(), 0})); }
  void TearDown() override { dog_.reset(); }

  int n() const { return GetParam().n; }
  std::int64_t m() const { return GetParam().m; }
  Mesh mesh() const { return Mesh{{"x", n()}}; }
  /// 240 elements split into non-empty chunks (and lane halves) for every N here.
  bool chunks_non_empty() const { return m() % (2 * n()) == 0; }
  Array make_input(Shape s) { return Array::generate<T>(n(), s, [](int d, std::int64_t i) { return input<T>(d, i); }, rt_); }

  /// Expects kCalls times `bytes` (and `copies`, where every chunk is non-empty).
  void expect(const LaunchStats& got, std::int64_t bytes, std::int64_t copies) {
    EXPECT_EQ(got.bytes_copied, kCalls * bytes) << "bytes per call: " << got.bytes_copied / kCalls;
    if (chunks_non_empty()) {
      EXPECT_EQ(got.copies, kCalls * copies) << "copies per call: " << got.copies / kCalls;
    }
  }

  /// An in-place all-reduce kernel with an explicit algorithm.
  Executable all_reduce_kernel(Algorithm alg, Direction dir) {
    return kernel([=](Vec<T> x) { collectives::all_reduce(x, "x", ReduceOp::sum, dir, alg); }).compile(mesh(), {Shape{m()}}, rt_);
  }

  Runtime rt_{RuntimeOptions{}};
  std::unique_ptr<Watchdog> dog_;
};

TEST_P(ByteCounts, AllGather) {
  const auto exe = collectives::all_gather_program<T>(mesh(), m(), {}, rt_);
  const Array x = make_input(Shape{m()});
  const auto got = measure(rt_, [&] { exe(x)[0].block_until_ready(); });
  expect(got, n() * n() * m() * S, n() * n());
}

TEST_P(ByteCounts, AllGatherInPlace) {
  for (Algorithm alg : {Algorithm::ring, Algorithm::direct}) {
    SCOPED_TRACE(name_of(alg));
    const auto exe = kernel([=](Ref<T, extents<dyn, dyn>, Hbm> x) { collectives::all_gather_in_place(x, "x", alg); })
                         .compile(mesh(), {Shape{n(), m()}}, rt_);
    Array x = make_input(Shape{n(), m()});
    const auto got = measure(rt_, [&] {
      exe.call_in_place({x});
      x.block_until_ready();
    });
    expect(got, n() * (n() - 1) * m() * S, n() * (n() - 1));
  }
}

TEST_P(ByteCounts, AllToAll) {
  const auto exe = collectives::all_to_all_program<T>(mesh(), m(), {}, rt_);
  const Array x = make_input(Shape{n(), m()});
  const auto got = measure(rt_, [&] { exe(x)[0].block_until_ready(); });
  expect(got, n() * n() * m() * S, n() * n());
}

/// Copies of a ring or ring_direct all-reduce: the reduce-scatter's in
/// every lane, then the all-gather's, per lane (ring) or one per pair
/// (ring_direct). Out of place, the reduce-scatter also adds x locally.
std::int64_t ring_all_reduce_copies(Algorithm alg, std::int64_t n, int lanes, bool in_place) {
  const std::int64_t scatter = (in_place ? 1 : 2) * lanes * n * (n - 1);
  return scatter + (alg == Algorithm::ring_direct ? 1 : lanes) * n * (n - 1);
}

TEST_P(ByteCounts, RingAllReduceInPlace) {
  for (Algorithm alg : {Algorithm::ring, Algorithm::ring_direct}) {
    for (Direction dir : {Direction::unidirectional, Direction::bidirectional}) {
      SCOPED_TRACE(std::string(name_of(alg)) + " " + name_of(dir));
      const auto exe = all_reduce_kernel(alg, dir);
      Array x = make_input(Shape{m()});
      const auto got = measure(rt_, [&] { exe.call_in_place({x}); x.block_until_ready(); });
      const int lanes = dir == Direction::bidirectional ? 2 : 1;
      expect(got, 2 * (n() - 1) * m() * S, ring_all_reduce_copies(alg, n(), lanes, true));
    }
  }
}

TEST_P(ByteCounts, DirectAllReduceInPlace) {
  const auto exe = all_reduce_kernel(Algorithm::direct, Direction::unidirectional);
  Array x = make_input(Shape{m()});
  const auto got = measure(rt_, [&] { exe.call_in_place({x}); x.block_until_ready(); });
  expect(got, 3 * (n() - 1) * m() * S, 3 * n() * (n() - 1));
}

TEST_P(ByteCounts, OneShotAllReduceInPlace) {
  const auto exe = all_reduce_kernel(Algorithm::one_shot, Direction::unidirectional);
  Array x = make_input(Shape{m()});
  const auto got = measure(rt_, [&] { exe.call_in_place({x}); x.block_until_ready(); });
  expect(got, n() > 1 ? n() * (n() + 1) * m() * S : 0, n() > 1 ? n() * (n() + 1) : 0);
}

TEST_P(ByteCounts, DirectAndOneShotAllReduceOutOfPlace) {
  for (Algorithm alg : {Algorithm::direct, Algorithm::one_shot}) {
    SCOPED_TRACE(name_of(alg));
    const auto exe = kernel([=](Vec<const T> x, Vec<T> out) {
                       collectives::all_reduce(x, out, "x", ReduceOp::sum, Direction::unidirectional, alg);
                     }).compile(mesh(), {Shape{m()}, Shape{m()}}, rt_);
    const Array x = make_input(Shape{m()});
    Array out = make_input(Shape{m()});
    const auto got = measure(rt_, [&] {
      exe.call_in_place({x, out});
      out.block_until_ready();
    });
    if (n() == 1) expect(got, m() * S, 1);  // out = x
    else if (alg == Algorithm::one_shot) expect(got, n() * (n() + 1) * m() * S, n() * (n() + 1));  // as in place
    else expect(got, 3 * (n() - 1) * m() * S + m() * S, 3 * n() * (n() - 1) + n());  // + own chunk of x into out
  }
}

/// Bytes and copies of one in-place all-reduce with Algorithm::automatic.
std::pair<std::int64_t, std::int64_t> automatic_all_reduce(std::int64_t n, std::int64_t m) {
  if (n == 1) return {0, 0};
  if (m * S <= collectives::one_shot_max_bytes) return {n * (n + 1) * m * S, n * (n + 1)};
  const std::int64_t rounds = n > 2 && m * S < collectives::direct_max_bytes ? 3 : 2;  // direct, else ring_direct (one lane)
  return {rounds * (n - 1) * m * S, rounds * n * (n - 1)};
}

TEST_P(ByteCounts, AllReduceProgramOutOfPlace) {
  for (Direction dir : {Direction::unidirectional, Direction::bidirectional}) {
    SCOPED_TRACE(name_of(dir));
    const auto exe = collectives::all_reduce_program<T>(mesh(), m(), {.direction = dir}, rt_);
    const Array x = make_input(Shape{m()});
    const auto got = measure(rt_, [&] { exe(x)[0].block_until_ready(); });
    const bool ring = n() == 2 ? m() * S > collectives::one_shot_max_bytes : n() > 2 && m() * S >= collectives::direct_max_bytes;
    const int lanes = dir == Direction::bidirectional ? 2 : 1;
    if (ring) {  // Algorithm::ring_direct
      expect(got, 3 * (n() - 1) * m() * S, ring_all_reduce_copies(Algorithm::ring_direct, n(), lanes, false));
    } else {
      // One-shot reads x where it reads out in place; direct copies its own chunk of x into
      // out (m elements over all devices); one device copies x.
      const auto [bytes, copies] = automatic_all_reduce(n(), m());
      const bool one_shot = n() > 1 && m() * S <= collectives::one_shot_max_bytes;
      expect(got, bytes + (one_shot ? 0 : m() * S), copies + (one_shot ? 0 : n()));
    }
  }
}

TEST_P(ByteCounts, AllReduceProgramInPlace) {
  const auto exe = collectives::all_reduce_program<T>(mesh(), m(), {.in_place = true}, rt_);
  Array x = make_input(Shape{m()});
  const auto got = measure(rt_, [&] { exe.call_in_place({x}); x.block_until_ready(); });
  const auto [bytes, copies] = automatic_all_reduce(n(), m());
  expect(got, bytes, copies);
}

TEST_P(ByteCounts, ReduceScatterInPlace) {
  for (Direction dir : {Direction::unidirectional, Direction::bidirectional}) {
    SCOPED_TRACE(name_of(dir));
    const auto exe = collectives::reduce_scatter_program<T>(mesh(), m(), {.direction = dir, .in_place = true}, rt_);
    Array x = make_input(Shape{m()});
    const auto got = measure(rt_, [&] { exe.call_in_place({x}); x.block_until_ready(); });
    const int lanes = dir == Direction::bidirectional ? 2 : 1;
    expect(got, (n() - 1) * m() * S, lanes * n() * (n() - 1));
  }
}

TEST_P(ByteCounts, ReduceScatterOutOfPlace) {
  const auto exe = collectives::reduce_scatter_program<T>(mesh(), m(), {}, rt_);
  const Array x = make_input(Shape{m()});
  const auto got = measure(rt_, [&] { exe(x)[0].block_until_ready(); });
  const std::int64_t bytes = m() * S;
  if (n() > 2 ? bytes < collectives::reduce_scatter_direct_max_bytes : n() == 2 && bytes <= collectives::one_shot_max_bytes) {
    // Direct: the other devices' chunks ((N-1) m in all), each device's own chunk into its slot (m), the result -> out (m).
    expect(got, (n() + 1) * m() * S, n() * (n() - 1) + 2 * n());
  } else {
    // The ring from x into scratch (2 (N-1) m: blocks, then own chunks added), each device's chunk -> out (m in all).
    expect(got, 2 * (n() - 1) * m() * S + m() * S, 2 * n() * (n() - 1) + n());
  }
}

TEST_P(ByteCounts, Ppermute) {
  const auto exe = kernel([](Vec<const T> x, Vec<T> y) { ppermute_done(ppermute_start(x, y, "x", 1)); })
                       .compile(mesh(), {Shape{m()}, Shape{m()}}, rt_);
  const Array x = make_input(Shape{m()});
  const auto got = measure(rt_, [&] { exe(x)[0].block_until_ready(); });
  expect(got, n() * m() * S, n());
}

// Compute on Vmem Refs around the collective moves no bytes through copies.
TEST_P(ByteCounts, AllReduceInsideAUserKernel) {
  constexpr std::int64_t rows = 240;
  const auto exe = kernel([](VmemRef<T, rows> x) {
                     x.store(x.load() * 2.0f);
                     collectives::all_reduce(x, "x", ReduceOp::sum, Direction::unidirectional, Algorithm::ring);
                     x.store(x.load() + 1.0f);
                   }).compile(mesh(), {}, rt_);
  Array x = make_input(Shape{rows});
  const auto got = measure(rt_, [&] { exe.call_in_place({x}); x.block_until_ready(); });
  EXPECT_EQ(got.bytes_copied, kCalls * 2 * (n() - 1) * rows * S);
}

TEST_P(ByteCounts, CollectiveMatmul) {
  const std::int64_t rows = m() % 7 + 1, k = 5, cols = 2;
  using M = Ref<T, extents<dyn, dyn>, Vmem>;
  using CM = Ref<const T, extents<dyn, dyn>, Vmem>;
  const auto exe = kernel([](CM a, CM b, M out) { collectives::collective_matmul(a, b, out, "x"); })
                       .compile(mesh(), {Shape{rows, k}, Shape{k, cols}, Shape{n() * rows, cols}}, rt_);
  const Array a = make_input(Shape{rows, k}), b = make_input(Shape{k, cols});
  const auto got = measure(rt_, [&] { exe(a, b)[0].block_until_ready(); });
  expect(got, n() * (n() - 1) * rows * k * S, n() * (n() - 1));
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int n : {1, 2, 3, 4, 5, 8})
    for (std::int64_t m : {240, 1001, 3, 9000}) out.push_back({n, m});  // 9000: past one_shot_max_bytes
  // Past direct_max_bytes: the all-reduce's ring_direct for N > 2.
  for (int n : {3, 4}) out.push_back({n, collectives::direct_max_bytes / S + 56});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, ByteCounts, ::testing::ValuesIn(cases()), case_name);

}  // namespace
