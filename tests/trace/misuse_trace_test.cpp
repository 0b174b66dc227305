// Misuses that the types cannot show, caught while tracing (issue 25): each
// raises refx::TraceError naming the user's line, and none reaches a crash or
// a silently wrong result. Their compile-time siblings are in
// tests/compile_fail/ (double_buffer_slot_two has none: a literal index is a
// run-time value to .at()).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

#include "support/testing.hpp"

using namespace refx;
using refx::testing::has_all;
using refx::testing::thrown;

namespace {

std::string here(int line, char after = ')') {
  return refx::testing::at_line("misuse_trace_test.cpp", line) + after;
}

// A DoubleBuffer has slots 0 and 1; slot 2 (a static index the types cannot
// check, since .at takes run-time integers) is out of bounds at trace time.
TEST(MisuseTrace, DoubleBufferSlotTwo) {
  int line = 0;
  auto f = [&] {
    trace([&](DoubleBuffer<float, 128> buf, VmemRef<float, 128> y) {
      line = __LINE__; y.store(buf.at(2).load());
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"out of bounds", here(line)}; }));
}

// start(accumulate) on bool elements: rejected at compile time through the
// typed descriptor make_async_copy returns (compile_fail/copy_accumulate_bool);
// through a plain AsyncCopy (the element type sliced away) it is rejected at
// trace time, where before it traced and the copy silently did nothing.
TEST(MisuseTrace, AccumulateBoolCopyThroughUntypedDescriptor) {
  int line = 0;
  auto f = [&] {
    trace([&](HbmRef<const bool, 128> x, VmemRef<bool, 128> y) {
      run_scoped([&](DmaSemaphore sem) {
        const AsyncCopy c = make_async_copy(x, y, sem);
        line = __LINE__; c.start(accumulate);
        c.wait();
      });
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] {
    return std::vector<std::string>{"start(accumulate)", "bool elements cannot be added", here(line)};
  }));
}

// The same copy without accumulate traces: the check is on the reduction only.
TEST(MisuseTrace, PlainBoolCopyStillTraces) {
  EXPECT_NO_THROW(trace([](HbmRef<const bool, 128> x, VmemRef<bool, 128> y) {
    run_scoped([&](DmaSemaphore sem) {
      const auto c = make_async_copy(x, y, sem);
      c.start();
      c.wait();
    });
  }));
}

// A device id, count or axis that is only known at run time still converts
// where it is exact: an int32 device id, an int loop bound, a std::string axis.
TEST(MisuseTrace, ExactIntegersAndNamesStillTrace) {
  const std::string axis = "x";
  EXPECT_NO_THROW(trace([&](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    const std::int32_t peer = 0;
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv, RegularSemaphore sem) {
      auto c = make_async_remote_copy(x, y, send, recv, peer);
      c.start();
      c.wait();
      semaphore_signal(sem, 2);
      semaphore_wait(sem, std::int16_t{2});
    });
    fori_loop(0, std::int32_t{4}, [&](Scalar<std::int32_t>) {});
  }));
}

}  // namespace
