// all_to_all against a host reference: block j of device i's x (N, block...)
// lands in slot i of device j's out. Every ring size and element type,
// blocks of several sizes; applying it twice is the identity.

#include <gtest/gtest.h>

#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

using Case = BlockCase;
constexpr auto case_name = &block_case_name;

/// Device d's expected out: slot j is block d of device j's x.
template <class T>
std::vector<T> transposed(const std::vector<std::vector<T>>& host, int d, std::int64_t block) {
  std::vector<T> want;
  for (const auto& xj : host)
    want.insert(want.end(), xj.begin() + d * block, xj.begin() + (d + 1) * block);
  return want;
}

class AllToAll : public ::testing::TestWithParam<Case> {};

TEST_P(AllToAll, SlotJOfDeviceDIsBlockDOfDeviceJ) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  with_elem(c.elem, [&]<class T>(std::type_identity<T>) {
    const Executable exe = collectives::all_to_all_program<T>(Mesh{{"x", c.n}}, c.block);
    const auto host = inputs<T>(c.n, c.n * c.block);
    const Array x = array_of(host, Shape{c.n, c.block});
    const Array out = exe(x)[0];
    for (int d = 0; d < c.n; ++d)
      ASSERT_TRUE(matches(out.to_host<T>(d), transposed(host, d, c.block), "device " + std::to_string(d)));
    // Applying it again undoes it.
    const Array back = exe(out)[0];
    for (int d = 0; d < c.n; ++d) ASSERT_TRUE(matches(back.to_host<T>(d), host[d], "twice, device " + std::to_string(d)));
  });
}

std::vector<Case> cases() {
  std::vector<Case> out;
  int k = 0;
  for (int n : kRingSizes)
    for (std::int64_t b : {1, 3, 7, 100})
      for (int rep = 0; rep < 2; ++rep) out.push_back({n, b, kElems[static_cast<std::size_t>(k++ % 4)]});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, AllToAll, ::testing::ValuesIn(cases()), case_name);

// Inside a user kernel on Vmem Refs with rank-3 blocks (N, rows, cols).
TEST(AllToAllInKernel, RankThreeVmemRefs) {
  Watchdog dog(kTestLimit, "all_to_all in a kernel");
  for (int n : {1, 3, 4}) {
    const std::int64_t rows = 2, cols = 3, block = rows * cols;
    auto exe = kernel([](Ref<const double, extents<dyn, dyn, dyn>, Vmem> x, Ref<double, extents<dyn, dyn, dyn>, Vmem> out) {
                 collectives::all_to_all(x, out, "x");
               }).compile(Mesh{{"x", n}}, {Shape{n, rows, cols}, Shape{n, rows, cols}});
    const auto host = inputs<double>(n, n * block, 9);
    const Array out = exe(array_of(host, Shape{n, rows, cols}))[0];
    for (int d = 0; d < n; ++d)
      ASSERT_TRUE(matches(out.to_host<double>(d), transposed(host, d, block), "N" + std::to_string(n) + " device " + std::to_string(d)));
  }
}

}  // namespace
