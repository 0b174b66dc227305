// all_gather against a host reference: out (N, block...) on every device
// holds device e's block in slot e. Every ring size, blocks smaller than,
// equal to and not divisible by N, every element type; rank-2 blocks and Vmem
// Refs inside a user kernel.

#include <gtest/gtest.h>

#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

using Case = BlockCase;
constexpr auto case_name = &block_case_name;

/// Slot e of every device's gathered (N, block) is device e's block.
template <class T>
::testing::AssertionResult gathered(const Array& out, const std::vector<std::vector<T>>& host) {
  const int n = static_cast<int>(host.size());
  std::vector<T> want;
  for (const auto& b : host) want.insert(want.end(), b.begin(), b.end());
  for (int d = 0; d < n; ++d)
    if (auto r = matches(out.to_host<T>(d), want, "device " + std::to_string(d)); !r) return r;
  return ::testing::AssertionSuccess();
}

class AllGather : public ::testing::TestWithParam<Case> {};

TEST_P(AllGather, EverySlotHoldsItsDevicesBlock) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  with_elem(c.elem, [&]<class T>(std::type_identity<T>) {
    const Executable exe = collectives::all_gather_program<T>(Mesh{{"x", c.n}}, c.block);
    const auto host = inputs<T>(c.n, c.block);
    const Array x = array_of(host, Shape{c.block});
    const Array out = exe(x)[0];
    ASSERT_EQ(out.shape(), (Shape{c.n, c.block}));
    EXPECT_TRUE(gathered(out, host));
  });
}

TEST_P(AllGather, RingAndDirectAlgorithms) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  with_elem(c.elem, [&]<class T>(std::type_identity<T>) {
    const auto host = inputs<T>(c.n, c.block);
    const Array x = array_of(host, Shape{c.block});
    for (Algorithm alg : {Algorithm::ring, Algorithm::direct}) {
      const Executable exe =
          kernel([alg](Ref<const T, extents<dyn>, Hbm> x, Ref<T, extents<dyn, dyn>, Hbm> out) {
            collectives::all_gather(x, out, "x", alg);
          }).compile(Mesh{{"x", c.n}}, {Shape{c.block}, Shape{c.n, c.block}});
      EXPECT_TRUE(gathered(exe(x)[0], host)) << name_of(alg);
    }
  });
}

// In place (MPI_IN_PLACE's convention): row d of device d's (N, block) x
// holds its block; the other rows start as garbage and end as the others'.
TEST_P(AllGather, InPlaceRingAndDirect) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  with_elem(c.elem, [&]<class T>(std::type_identity<T>) {
    const auto host = inputs<T>(c.n, c.block);
    const auto garbage = inputs<T>(c.n, c.n * c.block, 9);
    for (Algorithm alg : {Algorithm::automatic, Algorithm::ring, Algorithm::direct}) {
      std::vector<std::vector<T>> start = garbage;
      for (int d = 0; d < c.n; ++d)
        std::copy(host[d].begin(), host[d].end(), start[d].begin() + d * c.block);
      Array x = array_of(start, Shape{c.n, c.block});
      const Executable exe = alg == Algorithm::automatic
          ? collectives::all_gather_program<T>(Mesh{{"x", c.n}}, c.block, {.in_place = true})
          : kernel([alg](Ref<T, extents<dyn, dyn>, Hbm> x) { collectives::all_gather_in_place(x, "x", alg); })
                .compile(Mesh{{"x", c.n}}, {Shape{c.n, c.block}});
      exe.call_in_place({x});
      EXPECT_TRUE(gathered(x, host)) << name_of(alg);
    }
  });
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int n : kRingSizes) {
    std::vector<std::int64_t> blocks = sizes_for(n);
    if (std::find(blocks.begin(), blocks.end(), n) == blocks.end()) blocks.push_back(n);
    for (std::int64_t b : blocks)
      for (Elem e : kElems) out.push_back({n, b, e});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, AllGather, ::testing::ValuesIn(cases()), case_name);

// Rank-2 blocks in Vmem, gathered inside a kernel that computes the block
// first: the collective works on the user's own Refs.
TEST(AllGatherInKernel, RankTwoVmemBlocksComputedInTheKernel) {
  Watchdog dog(kTestLimit, "all_gather in a kernel");
  constexpr std::int64_t rows = 3, cols = 4;
  for (int n : {1, 2, 3, 8}) {
    auto exe = kernel([](VmemRef<const float, rows, cols> x, VmemRef<float, rows, cols> scratch,
                         Ref<float, extents<dyn, rows, cols>, Vmem> out) {
                 scratch.store(x.load() * 2.0f);
                 collectives::all_gather(scratch, out, "x");
               }).compile(Mesh{{"x", n}}, {Shape{rows, cols}, Shape{rows, cols}, Shape{n, rows, cols}});
    auto host = inputs<float>(n, rows * cols, 5);
    const Array x = array_of(host, Shape{rows, cols});
    const std::vector<Array> outs = exe(x);
    for (auto& b : host)
      for (float& v : b) v *= 2.0f;
    EXPECT_TRUE(gathered(outs[1], host)) << "N" << n;
  }
}

// A 2-D mesh: gathering along one axis leaves the other axis' groups apart.
TEST(AllGatherInKernel, AlongOneAxisOfATwoDimensionalMesh) {
  Watchdog dog(kTestLimit, "all_gather on a 2-D mesh");
  const Mesh mesh{{"x", 2}, {"y", 3}};  // device id = x * 3 + y
  for (const char* axis : {"x", "y"}) {
    const std::string a = axis;
    const int size = a == "x" ? 2 : 3;
    auto exe = kernel([a](Ref<const std::int32_t, extents<dyn>, Hbm> x, Ref<std::int32_t, extents<dyn, dyn>, Hbm> out) {
                 collectives::all_gather(x, out, a);
               }).compile(mesh, {Shape{2}, Shape{size, 2}});
    const Array x = Array::generate<std::int32_t>(6, Shape{2}, [](int d, std::int64_t i) { return d * 10 + i; });
    const Array out = exe(x)[0];
    for (int d = 0; d < 6; ++d) {
      const int dx = d / 3, dy = d % 3;
      std::vector<std::int32_t> want;
      for (int s = 0; s < size; ++s) {
        const int src = a == "x" ? s * 3 + dy : dx * 3 + s;
        want.push_back(src * 10);
        want.push_back(src * 10 + 1);
      }
      EXPECT_EQ(out.to_host<std::int32_t>(d), want) << "axis " << a << ", device " << d;
    }
  }
}

}  // namespace
