// Every collective in every form it has -- each algorithm, ring direction and
// in-place form of all_reduce, reduce_scatter and all_gather, and all_to_all,
// collective_matmul and ppermute -- on every ring size in kRingSizes, as a
// standalone program (collectives/programs.hpp; ppermute as a one-line
// kernel). Each case dispatches kCalls calls back to back before reading any
// result, then checks every result of every device against the host.
// Element type and reduction rotate with the case, so each variant meets
// every element type and both reductions across the ring sizes; sizes are
// 3N + 1 rows (never divisible by N > 1) or 13 (fewer rows than devices at
// N = 16: empty chunks).

#include <gtest/gtest.h>

#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

constexpr int kCalls = 100;

using refx::testing::name_of;

enum class Coll { all_reduce, reduce_scatter, all_gather, all_to_all, collective_matmul, ppermute };

const char* name_of(Coll c) {
  switch (c) {
    case Coll::all_reduce: return "allreduce";
    case Coll::reduce_scatter: return "reducescatter";
    case Coll::all_gather: return "allgather";
    case Coll::all_to_all: return "alltoall";
    case Coll::collective_matmul: return "matmul";
    case Coll::ppermute: return "ppermute";
  }
  return "?";
}

struct Variant {
  Coll coll;
  Algorithm alg = Algorithm::automatic;
  Direction dir = Direction::unidirectional;
  bool in_place = false;
};

constexpr auto uni = Direction::unidirectional, bi = Direction::bidirectional;
const Variant kVariants[] = {
    {Coll::all_reduce, Algorithm::ring, uni, false},
    {Coll::all_reduce, Algorithm::ring, bi, false},
    {Coll::all_reduce, Algorithm::ring, uni, true},
    {Coll::all_reduce, Algorithm::ring, bi, true},
    {Coll::all_reduce, Algorithm::direct, uni, false},
    {Coll::all_reduce, Algorithm::direct, uni, true},
    {Coll::all_reduce, Algorithm::one_shot, uni, false},
    {Coll::all_reduce, Algorithm::one_shot, uni, true},
    {Coll::all_reduce, Algorithm::ring_direct, uni, false},
    {Coll::all_reduce, Algorithm::ring_direct, bi, false},
    {Coll::all_reduce, Algorithm::ring_direct, uni, true},
    {Coll::all_reduce, Algorithm::ring_direct, bi, true},
    {Coll::reduce_scatter, Algorithm::ring, uni, false},
    {Coll::reduce_scatter, Algorithm::ring, bi, false},
    {Coll::reduce_scatter, Algorithm::ring, uni, true},
    {Coll::reduce_scatter, Algorithm::ring, bi, true},
    {Coll::reduce_scatter, Algorithm::direct, uni, false},
    {Coll::all_gather, Algorithm::ring, uni, false},
    {Coll::all_gather, Algorithm::ring, uni, true},
    {Coll::all_gather, Algorithm::direct, uni, false},
    {Coll::all_gather, Algorithm::direct, uni, true},
    {Coll::all_to_all},
    {Coll::collective_matmul},
    {Coll::ppermute},
};

struct Case {
  Variant v;
  int n;
  Elem elem;
  ReduceOp op;
  std::int64_t m;  // rows per device (all_gather, all_to_all, ppermute: per block)
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string s = "N" + std::to_string(c.n) + "_" + name_of(c.v.coll);
  if (c.v.alg != Algorithm::automatic) s += std::string("_") + name_of(c.v.alg);
  if (c.v.dir == bi) s += "_bi";
  if (c.v.in_place) s += "_inplace";
  if (c.v.coll == Coll::all_reduce || c.v.coll == Coll::reduce_scatter) s += std::string("_") + name_of(c.op);
  return s + "_" + name_of(c.elem) + "_m" + std::to_string(c.m);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  int vi = 0;
  for (const Variant& v : kVariants) {
    for (std::size_t ni = 0; ni < kRingSizes.size(); ++ni) {
      const int n = kRingSizes[ni];
      const std::size_t k = static_cast<std::size_t>(vi) + ni;  // 7 consecutive k: 7 of the 8 (type, op) pairs
      out.push_back({v, n, kElems[k % kElems.size()], (k / kElems.size()) % 2 == 0 ? ReduceOp::sum : ReduceOp::max,
                     ni % 2 == 0 ? 3 * n + 1 : 13});
    }
    ++vi;
  }
  return out;
}

/// kCalls calls dispatched back to back; `fresh()` makes one call's Arrays.
/// Out of place, every call reads the same inputs and returns output 0; in
/// place, every call gets fresh Arrays and its first one is the result.
template <class Fresh>
std::vector<Array> call_many(const Executable& exe, bool in_place, Fresh fresh) {
  std::vector<Array> results;
  const std::vector<Array> shared = in_place ? std::vector<Array>{} : fresh();
  for (int i = 0; i < kCalls; ++i) {
    if (in_place) {
      const std::vector<Array> args = fresh();
      exe.call_in_place(args);
      results.push_back(args[0]);
    } else {
      results.push_back(exe(shared)[0]);
    }
  }
  return results;
}

std::string at(int call, int device) { return "call " + std::to_string(call) + ", device " + std::to_string(device); }

/// Small integers as T: every product and sum of the matmul is exact.
template <class T>
std::vector<std::vector<T>> small_integers(int n, std::int64_t elements, int salt) {
  std::vector<std::vector<T>> out(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d)
    for (std::int64_t i = 0; i < elements; ++i)
      out[static_cast<std::size_t>(d)].push_back(static_cast<T>((d * 7 + i * 3 + salt) % 9 - 4));
  return out;
}

template <class T>
void check(const Case& c) {
  const int n = c.n;
  const std::int64_t m = c.m;
  const Mesh mesh{{"x", n}};
  const collectives::ProgramOptions o{.op = c.op, .direction = c.v.dir, .in_place = c.v.in_place, .algorithm = c.v.alg};
  const auto host = inputs<T>(n, m);
  switch (c.v.coll) {
    case Coll::all_reduce: {
      const std::vector<Array> results = call_many(collectives::all_reduce_program<T>(mesh, m, o), c.v.in_place,
                                     [&] { return std::vector<Array>{array_of(host, Shape{m})}; });
      const auto want = reduce(host, c.op);
      for (int i = 0; i < kCalls; ++i) {
        for (int d = 0; d < n; ++d) ASSERT_TRUE(matches(results[i].to_host<T>(d), want, at(i, d)));
        ASSERT_TRUE(bitwise_identical_across_devices(results[i])) << "call " << i;
      }
      break;
    }
    case Coll::reduce_scatter: {
      const std::vector<Array> results = call_many(collectives::reduce_scatter_program<T>(mesh, m, o), c.v.in_place,
                                     [&] { return std::vector<Array>{array_of(host, Shape{m})}; });
      const auto want = reduce(host, c.op);
      for (int i = 0; i < kCalls; ++i)
        for (int d = 0; d < n; ++d) {
          const Chunk k = chunk_of(m, n, d);  // in place at its rows of x, out of place at the start of out
          ASSERT_TRUE(matches(results[i].to_host<T>(d), c.v.in_place ? k.start : 0, want, k.start, k.len, at(i, d)));
        }
      break;
    }
    case Coll::all_gather: {
      std::vector<T> gathered;
      for (const auto& b : host) gathered.insert(gathered.end(), b.begin(), b.end());
      const std::vector<Array> results = call_many(collectives::all_gather_program<T>(mesh, m, o), c.v.in_place, [&] {
        if (!c.v.in_place) return std::vector<Array>{array_of(host, Shape{m})};
        // Row d holds device d's block, the other rows junk the gather must overwrite.
        std::vector<std::vector<T>> rows(static_cast<std::size_t>(n), std::vector<T>(static_cast<std::size_t>(n * m), T(-1)));
        for (int d = 0; d < n; ++d) std::copy(host[d].begin(), host[d].end(), rows[d].begin() + d * m);
        return std::vector<Array>{array_of(rows, Shape{n, m})};
      });
      for (int i = 0; i < kCalls; ++i)
        for (int d = 0; d < n; ++d) ASSERT_TRUE(matches(results[i].to_host<T>(d), gathered, at(i, d)));
      break;
    }
    case Coll::all_to_all: {
      const auto x = inputs<T>(n, n * m, 3);
      const std::vector<Array> results = call_many(collectives::all_to_all_program<T>(mesh, m, o), false,
                                     [&] { return std::vector<Array>{array_of(x, Shape{n, m})}; });
      for (int d = 0; d < n; ++d) {
        std::vector<T> want;  // block j of out is block d of device j's x
        for (const auto& xj : x) want.insert(want.end(), xj.begin() + d * m, xj.begin() + (d + 1) * m);
        for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(matches(results[i].to_host<T>(d), want, at(i, d)));
      }
      break;
    }
    case Coll::collective_matmul: {
      const std::int64_t rows = 3, k = m, cols = 2;
      const auto a = small_integers<T>(n, rows * k, 1), b = small_integers<T>(n, k * cols, 2);
      std::vector<T> gathered;
      for (const auto& ad : a) gathered.insert(gathered.end(), ad.begin(), ad.end());
      const std::vector<Array> results = call_many(collectives::collective_matmul_program<T>(mesh, rows, k, cols, o), false, [&] {
        return std::vector<Array>{array_of(a, Shape{rows, k}), array_of(b, Shape{k, cols})};
      });
      for (int d = 0; d < n; ++d) {
        const auto want = matmul(gathered, b[static_cast<std::size_t>(d)], n * rows, k, cols);
        for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(matches(results[i].to_host<T>(d), want, at(i, d)));
      }
      break;
    }
    case Coll::ppermute: {
      const int shift = c.op == ReduceOp::sum ? 1 : -2;
      using V = Ref<T, extents<dyn>, Hbm>;
      using CV = Ref<const T, extents<dyn>, Hbm>;
      const auto exe = kernel([shift](CV x, V y) { ppermute_done(ppermute_start(x, y, "x", shift)); })
                           .compile(mesh, {Shape{m}, Shape{m}});
      const std::vector<Array> results = call_many(exe, false, [&] { return std::vector<Array>{array_of(host, Shape{m})}; });
      for (int d = 0; d < n; ++d)
        for (int i = 0; i < kCalls; ++i)
          ASSERT_TRUE(matches(results[i].to_host<T>(d), host[static_cast<std::size_t>(permute_source(d, shift, n))], at(i, d)));
      break;
    }
  }
}

class EveryVariant : public ::testing::TestWithParam<Case> {};

TEST_P(EveryVariant, BackToBackCallsMatchTheHost) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  with_elem(c.elem, [&]<class T>(std::type_identity<T>) { check<T>(c); });
}

INSTANTIATE_TEST_SUITE_P(Matrix, EveryVariant, ::testing::ValuesIn(cases()), case_name);

// A program refuses an algorithm it does not have instead of ignoring it.
TEST(ProgramOptions, AnAlgorithmAProgramDoesNotHaveIsAnError) {
  const Mesh mesh{{"x", 4}};
  const auto message = [](auto make) -> std::string {
    try {
      (void)make();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  using collectives::ProgramOptions;
  EXPECT_NE(message([&] { return collectives::all_to_all_program<float>(mesh, 8, {.algorithm = Algorithm::ring}); })
                .find("refx: all_to_all_program has one algorithm"),
            std::string::npos);
  EXPECT_NE(message([&] { return collectives::collective_matmul_program<float>(mesh, 2, 2, 2, {.algorithm = Algorithm::direct}); })
                .find("refx: collective_matmul_program has one algorithm"),
            std::string::npos);
  EXPECT_NE(message([&] {
              return collectives::reduce_scatter_program<float>(mesh, 8, {.in_place = true, .algorithm = Algorithm::direct});
            }).find("in place there is only the ring"),
            std::string::npos);
  EXPECT_NE(message([&] { return collectives::all_gather_program<float>(mesh, 8, {.algorithm = Algorithm::one_shot}); })
                .find("Algorithm::one_shot is an all_reduce algorithm"),
            std::string::npos);
  EXPECT_NE(message([&] { return collectives::all_gather_program<float>(mesh, 8, {.algorithm = Algorithm::ring_direct}); })
                .find("refx: all_gather: Algorithm::ring_direct is an all_reduce algorithm; use ring, direct or automatic"),
            std::string::npos);
  EXPECT_NE(message([&] { return collectives::reduce_scatter_program<float>(mesh, 8, {.algorithm = Algorithm::ring_direct}); })
                .find("refx: reduce_scatter: Algorithm::ring_direct is an all_reduce algorithm; use ring, direct or automatic"),
            std::string::npos);
}

}  // namespace
