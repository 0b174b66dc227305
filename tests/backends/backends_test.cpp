// Copies, semaphores and collectives, each written once
// (support/backend_cases.hpp) and run on every backend: the reference
// interpreter and the threaded runtime, each with N = 1, 2, 4, 8 devices,
// and the interpreter once more with copies that land only when waited.
// (The MPI transport runs the same bodies: tests/transport/mpi_program.cpp.)

#include <gtest/gtest.h>

#include "support/backend_cases.hpp"
#include "support/runtime_testing.hpp"

namespace {

using namespace refx::testing::backends;
using refx::testing::kTestLimit;
using refx::testing::Watchdog;

std::vector<Backend> every_backend() {
  std::vector<Backend> out;
  for (Kind k : {Kind::interpreter, Kind::runtime})
    for (int n : {1, 2, 4, 8}) out.push_back(Backend{k, n, nullptr});
  for (int n : {1, 2, 4, 8}) out.push_back(Backend{Kind::interpreter, n, nullptr, /*lazy_copies=*/true});
  return out;
}

struct CaseName {
  std::string operator()(const ::testing::TestParamInfo<Backend>& info) const { return info.param.name(); }
};

class OnEveryBackend : public ::testing::TestWithParam<Backend> {
 protected:
  Watchdog dog_{kTestLimit, "backend case on " + GetParam().name()};
};

INSTANTIATE_TEST_SUITE_P(Backends, OnEveryBackend, ::testing::ValuesIn(every_backend()), CaseName{});

// One test per body, so that ctest names the failing behaviour.
TEST_P(OnEveryBackend, LocalAsyncCopy) { EXPECT_TRUE(local_async_copy(GetParam())); }
TEST_P(OnEveryBackend, RemoteCopyRight) { EXPECT_TRUE(remote_copy(GetParam(), 1)); }
TEST_P(OnEveryBackend, RemoteCopyLeft) { EXPECT_TRUE(remote_copy(GetParam(), -1)); }
TEST_P(OnEveryBackend, RegularSemaphore) { EXPECT_TRUE(regular_semaphore(GetParam())); }
TEST_P(OnEveryBackend, RemoteCopyWithRegularCompletion) { EXPECT_TRUE(remote_copy_regular_completion(GetParam())); }
TEST_P(OnEveryBackend, BarrierSemaphore) { EXPECT_TRUE(barrier_semaphore(GetParam())); }
TEST_P(OnEveryBackend, PpermuteRight) { EXPECT_TRUE(ppermute(GetParam(), 1)); }
TEST_P(OnEveryBackend, PpermuteByThree) { EXPECT_TRUE(ppermute(GetParam(), 3)); }
TEST_P(OnEveryBackend, AllGatherRing) { EXPECT_TRUE(all_gather(GetParam(), refx::collectives::Algorithm::ring)); }
TEST_P(OnEveryBackend, AllGatherDirect) { EXPECT_TRUE(all_gather(GetParam(), refx::collectives::Algorithm::direct)); }
TEST_P(OnEveryBackend, AllReduceRing) {
  EXPECT_TRUE(all_reduce(GetParam(), refx::collectives::Algorithm::ring, refx::collectives::Direction::unidirectional));
}
TEST_P(OnEveryBackend, AllReduceRingBidirectional) {
  EXPECT_TRUE(all_reduce(GetParam(), refx::collectives::Algorithm::ring, refx::collectives::Direction::bidirectional));
}
TEST_P(OnEveryBackend, AllReduceDirect) {
  EXPECT_TRUE(all_reduce(GetParam(), refx::collectives::Algorithm::direct, refx::collectives::Direction::unidirectional));
}
TEST_P(OnEveryBackend, AllReduceOneShot) {
  EXPECT_TRUE(all_reduce(GetParam(), refx::collectives::Algorithm::one_shot, refx::collectives::Direction::unidirectional));
}
TEST_P(OnEveryBackend, ReduceScatterRing) { EXPECT_TRUE(reduce_scatter(GetParam(), refx::collectives::Algorithm::ring)); }
TEST_P(OnEveryBackend, ReduceScatterDirect) { EXPECT_TRUE(reduce_scatter(GetParam(), refx::collectives::Algorithm::direct)); }
TEST_P(OnEveryBackend, AllToAll) { EXPECT_TRUE(all_to_all(GetParam())); }

// The lockstep interpreter itself must be able to fail: a wait nothing
// satisfies is a deadlock, not a hang or a pass.
TEST(LockstepInterpreter, ReportsADeadlock) {
  const refx::Mesh mesh{{"x", 2}};
  const refx::Graph g = refx::trace(
      [](refx::VmemRef<float, 4>) {
        refx::run_scoped([&](refx::RegularSemaphore s) { refx::semaphore_wait(s, 1); });
      },
      refx::TraceOptions{{refx::Shape{4}}, &mesh, -1});
  refx::Buffer a(refx::DType::f32, refx::Shape{4}), b(refx::DType::f32, refx::Shape{4});
  std::vector<std::vector<refx::Buffer*>> args{{&a}, {&b}};
  EXPECT_THROW(LockstepMesh(g, 2).run(args), refx::RuntimeError);
}

// Lazy copies read their source when waited, eager ones when started: a
// store to the source between start and wait (which verification would
// reject; the interpreter runs the traced graph unverified) tells them apart.
TEST(LockstepInterpreter, LazyCopiesLandAtTheWait) {
  const refx::Mesh mesh{{"x", 2}};
  const refx::Graph g = refx::trace(
      [](refx::VmemRef<float, 4> x, refx::VmemRef<float, 4> y) {
        refx::run_scoped([&](refx::DmaSemaphore s) {
          auto c = refx::make_async_copy(x, y, s);
          c.start();
          x.store(x.load() + 1.0f);
          c.wait();
        });
      },
      refx::TraceOptions{{refx::Shape{4}, refx::Shape{4}}, &mesh, -1});
  for (const bool lazy : {false, true}) {
    std::vector<refx::Buffer> bufs;
    for (int k = 0; k < 4; ++k) {
      bufs.emplace_back(refx::DType::f32, refx::Shape{4});
      bufs.back().fill_zero();
    }
    std::vector<std::vector<refx::Buffer*>> args{{&bufs[0], &bufs[1]}, {&bufs[2], &bufs[3]}};
    LockstepMesh(g, 2, lazy).run(args);
    for (int d = 0; d < 2; ++d)
      for (int i = 0; i < 4; ++i)
        EXPECT_EQ(bufs[static_cast<std::size_t>(2 * d + 1)].data<float>()[i], lazy ? 1.0f : 0.0f)
            << (lazy ? "lazy" : "eager") << " device " << d << " element " << i;
  }
}

}  // namespace
