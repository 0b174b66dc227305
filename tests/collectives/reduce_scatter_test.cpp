// reduce_scatter (out of place: device d receives chunk d, rows
// [d*q + min(d, r), ...) with q = m / N, r = m % N) and reduce_scatter_in_place
// (chunk d of x holds the result) against a host reference: every ring size,
// sizes smaller than and not divisible by N, sum and max, every element type,
// uni- and bidirectional.

#include <gtest/gtest.h>

#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

struct Case {
  int n;
  std::int64_t m;
  Elem elem;
  ReduceOp op;
  Direction dir;
  bool in_place;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return "N" + std::to_string(c.n) + "_m" + std::to_string(c.m) + "_" + name_of(c.elem) + "_" + name_of(c.op) + "_" +
         name_of(c.dir) + (c.in_place ? "_inplace" : "_outofplace");
}

class ReduceScatter : public ::testing::TestWithParam<Case> {};

TEST_P(ReduceScatter, EachDeviceHoldsItsReducedChunk) {
  const Case c = GetParam();
  // A single lane (m < 2) or a single device is not affected.
  Watchdog dog(kTestLimit, case_name({c, 0}));
  with_elem(c.elem, [&]<class T>(std::type_identity<T>) {
    const Mesh mesh{{"x", c.n}};
    const Executable exe =
        collectives::reduce_scatter_program<T>(mesh, c.m, {.op = c.op, .direction = c.dir, .in_place = c.in_place});
    const auto host = inputs<T>(c.n, c.m);
    const Expected<T> want = reduce(host, c.op);
    Array x = array_of(host, Shape{c.m});
    if (c.in_place) {
      exe.call_in_place({x});
      for (int d = 0; d < c.n; ++d) {
        const Chunk k = chunk_of(c.m, c.n, d);
        ASSERT_TRUE(matches(x.to_host<T>(d), k.start, want, k.start, k.len, "device " + std::to_string(d)));
      }
      return;
    }
    const Array out = exe(x)[0];
    ASSERT_EQ(out.shape(), (Shape{(c.m + c.n - 1) / c.n}));
    for (int d = 0; d < c.n; ++d) {
      const Chunk k = chunk_of(c.m, c.n, d);
      ASSERT_TRUE(matches(out.to_host<T>(d), 0, want, k.start, k.len, "device " + std::to_string(d)));
      ASSERT_TRUE(matches(x.to_host<T>(d), host[d], "input (must be unchanged)"));
    }
  });
}

/// The out-of-place cases, run with each algorithm chosen explicitly
/// (the program above takes Algorithm::automatic).
class ReduceScatterAlgorithms : public ::testing::TestWithParam<Case> {};

TEST_P(ReduceScatterAlgorithms, RingAndDirectOutOfPlace) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  with_elem(c.elem, [&]<class T>(std::type_identity<T>) {
    const auto host = inputs<T>(c.n, c.m);
    const Expected<T> want = reduce(host, c.op);
    const Array x = array_of(host, Shape{c.m});
    const std::int64_t rows = (c.m + c.n - 1) / c.n;
    for (Algorithm alg : {Algorithm::ring, Algorithm::direct}) {
      const Executable exe =
          kernel([c, alg](Ref<const T, extents<dyn>, Hbm> x, Ref<T, extents<dyn>, Hbm> out) {
            collectives::reduce_scatter(x, out, "x", c.op, c.dir, alg);
          }).compile(Mesh{{"x", c.n}}, {Shape{c.m}, Shape{rows}});
      const Array out = exe(x)[0];
      for (int d = 0; d < c.n; ++d) {
        const Chunk k = chunk_of(c.m, c.n, d);
        ASSERT_TRUE(matches(out.to_host<T>(d), 0, want, k.start, k.len, std::string(name_of(alg)) + " device " + std::to_string(d)));
      }
    }
  });
}

/// Every ring size x every size x both directions x in/out of place; the
/// element type and the op rotate.
std::vector<Case> sweep() {
  std::vector<Case> out;
  int k = 0;
  for (int n : kRingSizes)
    for (std::int64_t m : sizes_for(n))
      for (Direction dir : {Direction::unidirectional, Direction::bidirectional})
        for (bool in_place : {false, true}) {
          out.push_back({n, m, kElems[static_cast<std::size_t>(k % 4)], (k / 4) % 2 ? ReduceOp::max : ReduceOp::sum,
                         dir, in_place});
          ++k;
        }
  return out;
}

std::vector<Case> types() {
  std::vector<Case> out;
  for (int n : {3, 4})
    for (Elem e : kElems)
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max})
        for (Direction dir : {Direction::unidirectional, Direction::bidirectional})
          for (bool in_place : {false, true}) out.push_back({n, 1001, e, op, dir, in_place});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, ReduceScatter, ::testing::ValuesIn(sweep()), case_name);
INSTANTIATE_TEST_SUITE_P(Types, ReduceScatter, ::testing::ValuesIn(types()), case_name);

std::vector<Case> out_of_place(std::vector<Case> cases) {
  std::erase_if(cases, [](const Case& c) { return c.in_place; });
  return cases;
}
INSTANTIATE_TEST_SUITE_P(Sweep, ReduceScatterAlgorithms, ::testing::ValuesIn(out_of_place(sweep())), case_name);
INSTANTIATE_TEST_SUITE_P(Types, ReduceScatterAlgorithms, ::testing::ValuesIn(out_of_place(types())), case_name);

// The documented contract, shown on a case small enough to read: 10 rows on
// 4 devices are cut 3, 3, 2, 2.
TEST(ReduceScatterChunks, TenRowsOnFourDevices) {
  Watchdog dog(kTestLimit, "reduce_scatter chunks");
  EXPECT_EQ(chunk_of(10, 4, 0).start, 0);
  EXPECT_EQ(chunk_of(10, 4, 1).start, 3);
  EXPECT_EQ(chunk_of(10, 4, 2).start, 6);
  EXPECT_EQ(chunk_of(10, 4, 3).start, 8);
  EXPECT_EQ(chunk_of(10, 4, 3).len, 2);
  const Mesh mesh{{"x", 4}};
  auto exe = collectives::reduce_scatter_program<std::int32_t>(mesh, 10);
  // Device d holds 10 copies of d + 1 shifted by the row: the sum over devices is 10 + 4 * row.
  Array x = Array::generate<std::int32_t>(4, Shape{10}, [](int d, std::int64_t i) { return d + 1 + i; });
  const Array out = exe(x)[0];
  const std::vector<std::vector<std::int32_t>> want{{10, 14, 18}, {22, 26, 30}, {34, 38}, {42, 46}};
  for (int d = 0; d < 4; ++d) {
    auto got = out.to_host<std::int32_t>(d);
    got.resize(want[static_cast<std::size_t>(d)].size());
    EXPECT_EQ(got, want[static_cast<std::size_t>(d)]) << "device " << d;
  }
}

// Inside a user kernel on a rank-2 Vmem Ref: chunks are rows.
TEST(ReduceScatterShapes, RankTwoVmemRefInPlace) {
  Watchdog dog(kTestLimit, "rank-2 reduce_scatter");
  for (int n : {2, 3, 5}) {
    const std::int64_t rows = 7, cols = 3;
    auto exe = kernel([](Ref<std::int64_t, extents<dyn, dyn>, Vmem> x) {
                 collectives::reduce_scatter_in_place(x, "x", ReduceOp::max);
               }).compile(Mesh{{"x", n}}, {Shape{rows, cols}});
    const auto host = inputs<std::int64_t>(n, rows * cols, 3);
    Array x = array_of(host, Shape{rows, cols});
    exe.call_in_place({x});
    const auto want = reduce(host, ReduceOp::max);
    for (int d = 0; d < n; ++d) {
      const Chunk k = chunk_of(rows, n, d);
      ASSERT_TRUE(matches(x.to_host<std::int64_t>(d), k.start * cols, want, k.start * cols, k.len * cols,
                          "N" + std::to_string(n) + " device " + std::to_string(d)));
    }
  }
}

}  // namespace
