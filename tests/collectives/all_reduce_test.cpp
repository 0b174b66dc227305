// all_reduce against a host reference: every ring size, sizes smaller than
// and not divisible by N, sum and max, every element type, uni- and
// bidirectional, ring / direct / automatic, in place and out of place. Every
// device's result must also be bitwise the same (float sums included).

#include <gtest/gtest.h>

#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

template <class T>
using Vec = Ref<T, extents<dyn>, Hbm>;

struct Case {
  int n;
  std::int64_t m;
  Elem elem;
  ReduceOp op;
  Direction dir;
  Algorithm alg;
  bool in_place;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return "N" + std::to_string(c.n) + "_m" + std::to_string(c.m) + "_" + name_of(c.elem) + "_" + name_of(c.op) + "_" +
         name_of(c.alg) + "_" + name_of(c.dir) + (c.in_place ? "_inplace" : "_outofplace");
}

/// The program under test: all_reduce_program for Algorithm::automatic (what
/// a user calls), else a kernel choosing the algorithm explicitly.
template <class T>
Executable program_for(const Case& c, const Mesh& mesh) {
  if (c.alg == Algorithm::automatic)
    return collectives::all_reduce_program<T>(mesh, c.m, {.op = c.op, .direction = c.dir, .in_place = c.in_place});
  if (c.in_place)
    return kernel([c](Vec<T> x) { collectives::all_reduce(x, "x", c.op, c.dir, c.alg); }).compile(mesh, {Shape{c.m}});
  return kernel([c](Vec<const T> x, Vec<T> out) { collectives::all_reduce(x, out, "x", c.op, c.dir, c.alg); })
      .compile(mesh, {Shape{c.m}, Shape{c.m}});
}

class AllReduce : public ::testing::TestWithParam<Case> {};

TEST_P(AllReduce, MatchesHostReference) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  with_elem(c.elem, [&]<class T>(std::type_identity<T>) {
    const Mesh mesh{{"x", c.n}};
    const Executable exe = program_for<T>(c, mesh);
    const auto host = inputs<T>(c.n, c.m);
    const Expected<T> want = reduce(host, c.op);
    Array x = array_of(host, Shape{c.m});
    Array out;
    if (c.in_place) {
      exe.call_in_place({x});
      out = x;
    } else {
      out = exe(x)[0];
      for (int d = 0; d < c.n; ++d) ASSERT_TRUE(matches(x.to_host<T>(d), host[d], "input (must be unchanged)"));
    }
    for (int d = 0; d < c.n; ++d) ASSERT_TRUE(matches(out.to_host<T>(d), want, "device " + std::to_string(d)));
    EXPECT_TRUE(bitwise_identical_across_devices(out));
  });
}

struct AlgDir {
  Algorithm alg;
  Direction dir;
};
const AlgDir kAlgDirs[] = {{Algorithm::ring, Direction::unidirectional},
                           {Algorithm::ring, Direction::bidirectional},
                           {Algorithm::direct, Direction::unidirectional},
                           {Algorithm::one_shot, Direction::unidirectional},
                           {Algorithm::automatic, Direction::unidirectional},
                           {Algorithm::automatic, Direction::bidirectional}};

/// Every ring size x every size x every algorithm and direction; the element
/// type, the op and in/out of place rotate so that each appears everywhere.
std::vector<Case> sweep() {
  std::vector<Case> out;
  int k = 0;
  for (int n : kRingSizes)
    for (std::int64_t m : sizes_for(n))
      for (const AlgDir& ad : kAlgDirs) {
        out.push_back({n, m, kElems[static_cast<std::size_t>(k % 4)], (k / 4) % 2 ? ReduceOp::max : ReduceOp::sum, ad.dir,
                       ad.alg, k % 3 != 0});
        ++k;
      }
  return out;
}

/// The full product of element types, ops, algorithms and placement at a few
/// ring sizes (a size not divisible by N).
std::vector<Case> types() {
  std::vector<Case> out;
  for (int n : {2, 3, 5})
    for (Elem e : kElems)
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max})
        for (const AlgDir& ad : kAlgDirs)
          for (bool in_place : {false, true}) out.push_back({n, 1001, e, op, ad.dir, ad.alg, in_place});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, AllReduce, ::testing::ValuesIn(sweep()), case_name);
INSTANTIATE_TEST_SUITE_P(Types, AllReduce, ::testing::ValuesIn(types()), case_name);

// Multi-dimensional Refs: chunks are cut along the leading dimension only.
TEST(AllReduceShapes, RankTwoRefInsideAKernel) {
  Watchdog dog(kTestLimit, "rank-2 all_reduce");
  using Matrix = Ref<std::int32_t, extents<dyn, dyn>, Hbm>;
  using ConstMatrix = Ref<const std::int32_t, extents<dyn, dyn>, Hbm>;
  const std::int64_t rows = 7, cols = 5;
  for (int n : {3, 4}) {
    for (Algorithm alg : {Algorithm::ring, Algorithm::direct, Algorithm::one_shot, Algorithm::ring_direct}) {
      const auto host = inputs<std::int32_t>(n, rows * cols, 7);
      const auto want = reduce(host, ReduceOp::sum);
      const std::string what = "N" + std::to_string(n) + " " + name_of(alg);
      auto in_place = kernel([alg](Matrix x) {
                        collectives::all_reduce(x, "x", ReduceOp::sum, Direction::bidirectional, alg);
                      }).compile(Mesh{{"x", n}}, {Shape{rows, cols}});
      Array x = array_of(host, Shape{rows, cols});
      in_place.call_in_place({x});
      auto out_of_place = kernel([alg](ConstMatrix x, Matrix out) {
                            collectives::all_reduce(x, out, "x", ReduceOp::sum, Direction::bidirectional, alg);
                          }).compile(Mesh{{"x", n}}, {Shape{rows, cols}, Shape{rows, cols}});
      const Array y = out_of_place(array_of(host, Shape{rows, cols}))[0];
      for (int d = 0; d < n; ++d) {
        ASSERT_TRUE(matches(x.to_host<std::int32_t>(d), want, what + " in place, device " + std::to_string(d)));
        ASSERT_TRUE(matches(y.to_host<std::int32_t>(d), want, what + " out of place, device " + std::to_string(d)));
      }
    }
  }
}

}  // namespace
