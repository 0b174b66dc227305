// DMA priority (Pallas' desc.start(priority=p), async_copy(..., priority=p);
// Mosaic's enqueue_dma takes 0, the default and highest, or 1, and 0 only for
// a remote copy): recorded on the copy, refused out of range on the user's
// line, the same data on the threaded runtime, and in predict a priority-0
// copy takes its link before priority-1 copies already queued there.

#include <gtest/gtest.h>

#include <refx/predict.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kRows = 512, kCols = 1024;  // 2 MiB a copy
using In = HbmRef<const float, kRows, kCols>;
using Buf = VmemRef<float, kRows, kCols>;
int g_line = 0;

/// Copies a then b in, at priorities pa and pb, and sums them into y.
Executable two_copies(int pa, int pb) {
  return kernel([pa, pb](In a, In b, VmemRef<float, kRows, kCols> y) {
           run_scoped([&](Buf ta, Buf tb, DmaSemaphores<2> sems) {
             auto ca = make_async_copy(a, ta, sems.at(0));
             ca.start(Priority{pa});
             auto cb = async_copy(b, tb, sems.at(1), Priority{pb});
             ca.wait();
             cb.wait();
             y.store(ta.load() + tb.load());
           });
         })
      .compile(Mesh{{"x", 1}});
}

TEST(DmaPriority, IsRecordedAndMovesTheSameData) {
  const Executable exe = two_copies(1, 0);
  const std::string text = to_text(exe.program().graph);
  EXPECT_NE(text.find("dma_start[desc=0 p1"), std::string::npos) << text;
  EXPECT_EQ(text.find("dma_start[desc=1 p"), std::string::npos) << text;  // 0 is not printed
  const Array a = Array::generate<float>(1, Shape{kRows, kCols}, tag);
  const Array b = Array::generate<float>(1, Shape{kRows, kCols}, [](int, std::int64_t i) { return 0.5f * i; });
  const std::vector<float> h = exe(a, b)[0].to_host<float>(0);
  for (std::int64_t i = 0; i < kRows * kCols; i += 4099) EXPECT_EQ(h[i], tag(0, i) + 0.5f * i) << i;
}

TEST(DmaPriority, APriorityZeroCopyOvertakesInThePrediction) {
  const Array a = Array::generate<float>(1, Shape{kRows, kCols}, tag), b = a;
  const Array y = Array::generate<float>(1, Shape{kRows, kCols}, tag);
  const auto copies = [&](int pa, int pb) { return predict(two_copies(pa, pb), targets::v6e(), {a, b, y}).copies; };
  // Alike: b waits for a's use of the device's HBM.
  const std::vector<PredictedCopy> fifo = copies(0, 0);
  ASSERT_EQ(fifo.size(), 2u);
  EXPECT_GE(fifo[1].start, fifo[0].arrival);
  // a at priority 1: b goes first, when it is issued.
  const std::vector<PredictedCopy> first = copies(1, 0);
  EXPECT_DOUBLE_EQ(first[1].start, first[1].issued);
  EXPECT_LT(first[1].arrival, fifo[1].arrival);
  // b at priority 1 behind a at 0: it waits, as in the FIFO case.
  const std::vector<PredictedCopy> behind = copies(0, 1);
  EXPECT_GE(behind[1].start, behind[0].arrival);
}

TEST(DmaPriority, OutOfRangeOrRemoteIsRefusedOnTheUsersLine) {
  for (int p : {2, -1}) {
    const std::string msg = error_of([p] {
      (void)kernel([p](In a, VmemRef<float, kRows, kCols>) {
        run_scoped([&](Buf t, DmaSemaphore s) {
          g_line = __LINE__; make_async_copy(a, t, s).start(Priority{p});
        });
      }).compile(Mesh{{"x", 1}});
    });
    EXPECT_NE(msg.find(fmt::format("refx: dma_start: priority {} is neither 0 (the default, highest) nor 1", p)),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find(here(__FILE__, g_line)), std::string::npos) << msg;
  }
  const std::string remote = error_of([] {
    (void)kernel([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
      run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
        auto c = make_async_remote_copy(x, y, send, recv, (axis_index("x") + 1) % 2);
        g_line = __LINE__; c.start(Priority{1});
        c.wait();
      });
    }).compile(Mesh{{"x", 2}});
  });
  EXPECT_NE(remote.find("a remote copy runs at priority 0"), std::string::npos) << remote;
  EXPECT_NE(remote.find(here(__FILE__, g_line)), std::string::npos) << remote;
}

}  // namespace
