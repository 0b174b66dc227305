// Verification: each hazard class is caught before anything runs, with a
// message naming both source lines; correct programs (ring permutes, an
// all-gather, double buffering, loops) pass.

#include <gtest/gtest.h>

#include "support/graph_testing.hpp"
#include <refx/ir/interpret.hpp>
#include <refx/passes/pipeline.hpp>

using namespace refx;
using refx::graph_testing::line_of;
using refx::graph_testing::trace_for;
using refx::testing::throws_with;

namespace {

#define LINE_OF(n) line_of(__FILE__, n)

/// passes::verify(g) throws a VerifyError whose message holds every needle.
::testing::AssertionResult verify_rejects(const Graph& g, std::initializer_list<std::string> needles) {
  return throws_with<VerifyError>([&] { passes::verify(g); }, needles);
}

const Mesh ring4{{"x", 4}};
constexpr int n = 4;  // devices on ring4

// ---- copies: windows between start and wait

TEST(Verify, WriteToTheSourceOfALocalCopyInFlight) {
  int start = 0, write = 0;
  auto g = trace([&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start(); start = __LINE__;
      x.at(ds(4, 4)).store(full<float, 4>(1.0f)); write = __LINE__;
      c.wait();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"writes the source", LINE_OF(start), LINE_OF(write)}));
}

TEST(Verify, ReadingTheSourceOfACopyInFlightIsFine) {
  auto g = trace([](VmemRef<float, 16> x, VmemRef<float, 16> y, VmemRef<float, 16> z) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start();
      z.store(x.load() + 1.0f);
      c.wait();
      z.store(y.load());
    });
  });
  EXPECT_NO_THROW(passes::verify(g));
}

TEST(Verify, ReadOfTheDestinationOfALocalCopyInFlight) {
  int start = 0, read = 0;
  auto g = trace([&](VmemRef<float, 16> x, VmemRef<float, 16> y, VmemRef<float, 4> z) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start(); start = __LINE__;
      z.store(y.at(ds(12, 4)).load()); read = __LINE__;
      c.wait();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"reads the destination", LINE_OF(start), LINE_OF(read)}));
}

TEST(Verify, DisjointRegionsOfTheSameRefMayBeTouched) {
  auto g = trace([](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x.at(ds(0, 8)), y.at(ds(0, 8)), sem);
      c.start();
      x.at(ds(8, 8)).store(full<float, 8>(1.0f));      // not the source region
      y.at(ds(8, 8)).store(x.at(ds(0, 8)).load());      // not the destination region
      c.wait();
    });
  });
  EXPECT_NO_THROW(passes::verify(g));
}

TEST(Verify, StridedRegionsAreComparedExactly) {
  int start = 0, write = 0;
  auto g = trace([&](VmemRef<float, 16> x, VmemRef<float, 8> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x.at(ds(0, 8, 2)), y, sem);  // even elements
      c.start(); start = __LINE__;
      x.at(ds(1, 8, 2)).store(full<float, 8>(1.0f));        // odd: fine
      x.at(ds(6, 1)).store(full<float, 1>(2.0f)); write = __LINE__;  // even: hazard
      c.wait();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {LINE_OF(start), LINE_OF(write)}));
}

TEST(Verify, HazardInsideANestedBodyIsCaught) {
  int start = 0, write = 0;
  auto g = trace([&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start(); start = __LINE__;
      fori_loop(0, 3, [&](Scalar<std::int32_t>) {
        y.at(ds(0, 2)).store(full<float, 2>(1.0f)); write = __LINE__;
      });
      c.wait();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"writes the destination", LINE_OF(start), LINE_OF(write)}));
}

TEST(Verify, TracedIndicesCountWithinOneIterationOnly) {
  // Double buffering with traced slots: copy into slot (i+1)%2 while computing on slot i%2.
  auto g = trace([](VmemRef<const float, 8, 16> x, VmemRef<float, 8, 16> out) {
    run_scoped([&](VmemRef<float, 2, 16> buf, DmaSemaphores<2> sems) {
      make_async_copy(x.at(0), buf.at(0), sems.at(0)).start();
      fori_loop(0, 8, [&](Scalar<std::int32_t> i) {
        auto cur = i % 2, nxt = (i + 1) % 2;
        when(i + 1 < 8, [&] { make_async_copy(x.at(i + 1), buf.at(nxt), sems.at(nxt)).start(); });
        make_async_copy(x.at(i), buf.at(cur), sems.at(cur)).wait();
        out.at(i).store(buf.at(cur).load() * 2.0f);
      });
    });
  });
  EXPECT_NO_THROW(passes::verify(g));
  Buffer x = refx::testing::make_buffer_fn<float>(Shape{8, 16}, [](std::int64_t i) { return float(i); });
  Buffer out(DType::f32, Shape{8, 16});
  passes::run_pipeline(g);
  interpret(g, x, out);
  EXPECT_EQ(refx::testing::contents<float>(out)[16 * 7 + 3], 2.0f * (16 * 7 + 3));
}

TEST(Verify, TracedIndexUsedAtStartAndAccessIsTheSameRegion) {
  int start = 0, read = 0;
  auto g = trace([&](VmemRef<float, 4, 8> x, VmemRef<float, 4, 8> y, VmemRef<float, 8> z, SmemRef<const std::int32_t> k) {
    run_scoped([&](DmaSemaphore sem) {
      auto i = k.load();
      auto c = make_async_copy(x.at(i), y.at(i), sem);
      c.start(); start = __LINE__;
      z.store(y.at(i).load()); read = __LINE__;
      c.wait();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {LINE_OF(start), LINE_OF(read)}));
}

// A view spanning a whole dimension meets every view of that dimension, so
// a traced index there is a hazard wherever it comes from: straight-line
// code, a loop index, or another device's id.
TEST(Verify, TracedIndexIntoTheWholeDestinationOfACopyInFlight) {
  int start = 0, write = 0;
  auto straight = trace_for(ring4, [&](VmemRef<const float, 4, 8> x, VmemRef<float, 4, 8> y) {
    run_scoped([&](VmemRef<float, 4, 8> buf, DmaSemaphore sem) {
      auto c = make_async_copy(x, buf, sem);
      c.start(); start = __LINE__;
      buf.at(axis_index("x")).store(full<float, 8>(1.0f)); write = __LINE__;
      c.wait();
      y.store(buf.load());
    });
  });
  EXPECT_TRUE(throws_with<VerifyError>([&] { passes::verify(straight); },
                                       {"writes the destination", LINE_OF(start), LINE_OF(write)}));
  auto looped = trace([&](VmemRef<const float, 4, 8> x, VmemRef<float, 4, 8> y) {
    run_scoped([&](VmemRef<float, 4, 8> buf, DmaSemaphore sem) {
      auto c = make_async_copy(x, buf, sem);
      c.start(); start = __LINE__;
      fori_loop(0, 4, [&](Scalar<std::int32_t> i) { y.at(i).store(buf.at(i).load()); write = __LINE__; });
      c.wait();
    });
  });
  EXPECT_TRUE(throws_with<VerifyError>([&] { passes::verify(looped); },
                                       {"reads the destination", LINE_OF(start), LINE_OF(write)}));
  // Half of the rows is not the whole dimension: a traced row may miss it.
  auto half = trace([&](VmemRef<const float, 4, 8> x, VmemRef<float, 4, 8> y, SmemRef<const std::int32_t> k) {
    run_scoped([&](VmemRef<float, 4, 8> buf, DmaSemaphore sem) {
      auto c = make_async_copy(x.at(ds(0, 2)), buf.at(ds(0, 2)), sem);
      c.start();
      buf.at(k.load()).store(full<float, 8>(1.0f));
      c.wait();
      y.store(buf.load());
    });
  });
  EXPECT_NO_THROW(passes::verify(half));
}

TEST(Verify, WriteToTheSourceOfARemoteCopyBeforeWaitSend) {
  int start = 0, write = 0;
  auto g = trace_for(ring4, [&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    auto right = (axis_index("x") + 1) % 4;
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, right);
      c.start(); start = __LINE__;
      c.wait_recv();
      x.store(full<float, 16>(0.0f)); write = __LINE__;
      c.wait_send();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"writes the source", LINE_OF(start), LINE_OF(write), "wait_send"}));
}

TEST(Verify, TouchingTheReceiveRegionOfARemoteCopyBeforeWaitRecv) {
  int start = 0, read = 0;
  auto g = trace_for(ring4, [&](VmemRef<float, 16> x, VmemRef<float, 16> y, VmemRef<float, 16> z) {
    auto right = (axis_index("x") + 1) % 4;
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, right);
      c.start(); start = __LINE__;
      c.wait_send();
      z.store(y.load()); read = __LINE__;  // the left neighbour's copy may still be landing here
      c.wait_recv();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"reads the destination", LINE_OF(start), LINE_OF(read), "wait_recv"}));
}

// ---- aliasing copies

TEST(Verify, LocalCopyBetweenOverlappingRegions) {
  int made = 0, start = 0;
  auto g = trace([&](VmemRef<float, 16> x) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x.at(ds(0, 8)), x.at(ds(4, 8)), sem); made = __LINE__;
      c.start(); start = __LINE__;
      c.wait();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"overlap", LINE_OF(made), LINE_OF(start)}));
}

TEST(Verify, RemotePermuteFromARefIntoItself) {
  int made = 0, start = 0;
  auto g = trace_for(ring4, [&](VmemRef<float, 16> x) {
    auto right = (axis_index("x") + 1) % 4;
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, x, send, recv, right); made = __LINE__;
      c.start(); start = __LINE__;
      c.wait();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"into itself", LINE_OF(made), LINE_OF(start)}));
}

TEST(Verify, RemoteCopyBetweenSlotsOfOneBufferIsFine) {
  auto g = trace_for(ring4, [&](VmemRef<float, 2, 16> buf) {
    auto right = (axis_index("x") + 1) % 4;
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(buf.at(0), buf.at(1), send, recv, right);
      c.start();
      c.wait();
    });
  });
  EXPECT_NO_THROW(passes::verify(g));
}

// ---- descriptors: never started, never waited, waited twice

TEST(Verify, LocalCopyStartedAndNeverWaited) {
  int made = 0, start = 0;
  auto g = trace([&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem); made = __LINE__;
      c.start(); start = __LINE__;
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"never waited", LINE_OF(made), LINE_OF(start)}));
}

TEST(Verify, RemoteCopyWhoseSendSideIsNeverWaited) {
  int start = 0;
  auto g = trace_for(ring4, [&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    auto right = (axis_index("x") + 1) % 4;
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, right);
      c.start(); start = __LINE__;
      c.wait_recv();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"never waited (send side", LINE_OF(start), "wait_send"}));
}

TEST(Verify, RemoteCopyNeverReceived) {
  int start = 0;
  auto g = trace_for(ring4, [&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    auto right = (axis_index("x") + 1) % 4;
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, right);
      c.start(); start = __LINE__;
      c.wait_send();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"never waited (receive side", LINE_OF(start)}));
}

TEST(Verify, CopyWaitedTwice) {
  int made = 0, first = 0, second = 0;
  auto g = trace([&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem); made = __LINE__;
      c.start();
      c.wait(); first = __LINE__;
      c.wait(); second = __LINE__;
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"waited twice", LINE_OF(made), LINE_OF(first), LINE_OF(second)}));
}

TEST(Verify, DescriptorNeverStarted) {
  int made = 0;
  auto g = trace([&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem); made = __LINE__;
      (void)c;
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"never started", LINE_OF(made)}));
}

TEST(Verify, WaitOnASemaphoreNoCopyAdvances) {
  int made = 0, wait = 0;
  auto g = trace([&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem); made = __LINE__;
      c.wait(); wait = __LINE__;
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"wait forever", LINE_OF(made), LINE_OF(wait)}));
}

TEST(Verify, AFreshDescriptorMayWaitForACopyAnotherOneStarted) {
  auto g = trace([&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      make_async_copy(x, y, sem).start();
      make_async_copy(x, y, sem).wait();  // Pallas style: wait through an equal descriptor
    });
  });
  EXPECT_NO_THROW(passes::verify(g));
}

// ---- shared DMA semaphores

TEST(Verify, OneDmaSemaphoreSharedByTwoCopiesInFlight) {
  int first = 0, second = 0;
  const auto kernel = [&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto a = make_async_copy(x.at(ds(0, 8)), y.at(ds(0, 8)), sem);
      auto b = make_async_copy(x.at(ds(8, 8)), y.at(ds(8, 8)), sem);
      a.start(); first = __LINE__;
      b.start(); second = __LINE__;
      a.wait();
      b.wait();
    });
  };
  auto g = trace(kernel);
  passes::VerifyOptions strict;
  strict.shared_semaphore = passes::SharedSemaphorePolicy::error;
  EXPECT_TRUE(throws_with<VerifyError>([&] { passes::verify(g, strict); }, {"shared by two copies", LINE_OF(first), LINE_OF(second)}));
  passes::VerifyOptions warn;
  warn.shared_semaphore = passes::SharedSemaphorePolicy::warn;
  const auto report = passes::verify(g, warn);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find(LINE_OF(second)), std::string::npos);
  passes::VerifyOptions allow;
  allow.shared_semaphore = passes::SharedSemaphorePolicy::allow;
  EXPECT_TRUE(passes::verify(g, allow).warnings.empty());
}

TEST(Verify, SemaphoreArrayElementsAreDistinct) {
  auto g = trace([&](VmemRef<float, 16> x, VmemRef<float, 16> y) {
    run_scoped([&](DmaSemaphores<2> sems) {
      auto a = make_async_copy(x.at(ds(0, 8)), y.at(ds(0, 8)), sems.at(0));
      auto b = make_async_copy(x.at(ds(8, 8)), y.at(ds(8, 8)), sems.at(1));
      a.start();
      b.start();
      b.wait();
      a.wait();
    });
  });
  EXPECT_NO_THROW(passes::verify(g));
}

TEST(Verify, PipelineOptionSelectsTheSharedSemaphorePolicy) {
  auto k = kernel([](HbmRef<const float, 16> x, HbmRef<float, 16> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto a = make_async_copy(x.at(ds(0, 8)), y.at(ds(0, 8)), sem);
      auto b = make_async_copy(x.at(ds(8, 8)), y.at(ds(8, 8)), sem);
      a.start();
      b.start();
      a.wait();
      b.wait();
    });
  });
  EXPECT_NO_THROW(k.compile(Mesh{{"x", 1}}));  // allowed by default: one wait may absorb several copies
  passes::Options strict;
  strict.shared_semaphore = passes::SharedSemaphorePolicy::error;
  EXPECT_THROW(k.passes(strict).compile(Mesh{{"x", 1}}), VerifyError);
  static int warnings = 0;
  passes::Options o;
  o.shared_semaphore = passes::SharedSemaphorePolicy::warn;
  o.on_warning = [](const std::string&) { ++warnings; };
  EXPECT_NO_THROW(k.passes(o).compile(Mesh{{"x", 1}}));
  EXPECT_EQ(warnings, 1);
}

// ---- REGULAR semaphore balance

TEST(Verify, LocalSemaphoreWaitedMoreThanSignalled) {
  int signal = 0, wait = 0;
  auto g = trace([&](VmemRef<float, 4> x) {
    run_scoped([&](RegularSemaphore s) {
      semaphore_signal(s, 1); signal = __LINE__;
      x.store(full<float, 4>(1.0f));
      semaphore_wait(s, 2); wait = __LINE__;
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"wait forever", LINE_OF(signal), LINE_OF(wait)}));
}

TEST(Verify, SignalsLeftOverWhenTheScopeEnds) {
  int signal = 0, wait = 0;
  auto g = trace_for(ring4, [&](VmemRef<float, 4> x) {
    auto left = (axis_index("x") + 3) % 4;
    run_scoped([&](RegularSemaphore s) {
      fori_loop(0, 4, [&](Scalar<std::int32_t>) { semaphore_signal(s, 1, left); signal = __LINE__; });
      fori_loop(0, 3, [&](Scalar<std::int32_t>) { semaphore_wait(s, 1); wait = __LINE__; });
      x.store(full<float, 4>(1.0f));
    });
  });
  EXPECT_TRUE(verify_rejects(g, {"do not balance", "1 more signalled", LINE_OF(signal), LINE_OF(wait)}));
}

TEST(Verify, LoopsWithStaticTripCountsBalance) {
  auto g = trace_for(ring4, [&](VmemRef<float, 4> x) {
    auto left = (axis_index("x") + 3) % 4;
    run_scoped([&](RegularSemaphore s) {
      fori_loop(0, 6, [&](Scalar<std::int32_t>) { semaphore_signal(s, 1, left); });
      fori_loop(0, 3, [&](Scalar<std::int32_t>) { semaphore_wait(s, 2); });
      x.store(full<float, 4>(1.0f));
    });
  });
  EXPECT_NO_THROW(passes::verify(g));
}

TEST(Verify, EachCondBranchIsCheckedFromTheStateBeforeIt) {
  // Both branches copy into y and wait: balanced. The else branch then reads
  // y before its copy is waited: reported, with its lines, though the then
  // branch (simulated first) is correct.
  int start = 0, read = 0;
  auto g = trace([&](VmemRef<const float, 8> a, VmemRef<const float, 8> b, VmemRef<float, 8> y, VmemRef<float, 8> z,
                     SmemRef<const std::int32_t> k) {
    run_scoped([&](DmaSemaphore sem) {
      cond(k.load() == 0, [&] {
        auto c = make_async_copy(a, y, sem);
        c.start();
        c.wait();
      }, [&] {
        auto c = make_async_copy(b, y, sem);
        c.start(); start = __LINE__;
        z.store(y.load()); read = __LINE__;
        c.wait();
      });
    });
  });
  EXPECT_TRUE(verify_rejects(g, {LINE_OF(start), LINE_OF(read)}));
  auto ok = trace([&](VmemRef<const float, 8> a, VmemRef<const float, 8> b, VmemRef<float, 8> y,
                      SmemRef<const std::int32_t> k) {
    run_scoped([&](DmaSemaphore sem) {
      const auto src = cond(k.load() == 0, [&] {
        make_async_copy(a, y, sem).start();
        return Scalar<std::int32_t>(0);
      }, [&] {
        make_async_copy(b, y, sem).start();
        return Scalar<std::int32_t>(1);
      });
      make_async_copy(a, y, sem).wait();  // the same byte count either way
      y.at(0).store(cast<float>(src));
    });
  });
  EXPECT_NO_THROW(passes::verify(ok));
}

TEST(Verify, UnprovableCountsAreNotReported) {
  // Traced trip counts and conditional signals: nothing is provable.
  auto g = trace_for(ring4, [&](VmemRef<float, 4> x, SmemRef<const std::int32_t> n) {
    auto me = axis_index("x");
    run_scoped([&](RegularSemaphore s) {
      fori_loop(0, n.load(), [&](Scalar<std::int32_t>) { semaphore_signal(s, 1, 0); });
      when(me == 0, [&] { fori_loop(0, 3, [&](Scalar<std::int32_t>) { semaphore_wait(s, 1); }); });
      x.store(full<float, 4>(1.0f));
    });
  });
  EXPECT_NO_THROW(passes::verify(g));
}

TEST(Verify, CopiesInALoopThatAreWaitedAfterIt) {
  int start = 0;
  auto g = trace([&](VmemRef<float, 4, 8> x, VmemRef<float, 4, 8> y) {
    run_scoped([&](DmaSemaphore sem) {
      fori_loop(0, 4, [&](Scalar<std::int32_t> i) { make_async_copy(x.at(i), y.at(i), sem).start(); start = __LINE__; });
      fori_loop(0, 3, [&](Scalar<std::int32_t> i) { make_async_copy(x.at(i), y.at(i), sem).wait(); });
    });
  });
  passes::VerifyOptions allow;
  allow.shared_semaphore = passes::SharedSemaphorePolicy::allow;
  EXPECT_TRUE(throws_with<VerifyError>([&] { passes::verify(g, allow); }, {"never waited", LINE_OF(start)}));
}

TEST(Verify, HazardAcrossLoopIterationsWithStaticRegions) {
  int start = 0, write = 0;
  auto g = trace([&](VmemRef<float, 8> x, VmemRef<float, 8> y) {
    run_scoped([&](DmaSemaphore sem) {
      make_async_copy(x, y, sem).start();
      fori_loop(0, 4, [&](Scalar<std::int32_t>) {
        make_async_copy(x, y, sem).wait();
        make_async_copy(x, y, sem).start(); start = __LINE__;
        x.store(full<float, 8>(1.0f)); write = __LINE__;  // the copy of this iteration still reads x
      });
      make_async_copy(x, y, sem).wait();
    });
  });
  EXPECT_TRUE(verify_rejects(g, {LINE_OF(start), LINE_OF(write)}));
}

// ---- correct ring programs pass (and run)

TEST(VerifyRing, RightPermutePassesAndRuns) {
  auto exe = kernel([](HbmRef<const float, 256> x, HbmRef<float, 256> y) {
               auto me = axis_index("x");
               auto n = axis_size("x");
               run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                 semaphore_signal(ready, 1, (me + n - 1) % n);
                 semaphore_wait(ready, 1);
                 auto c = make_async_remote_copy(x, y, send, recv, (me + 1) % n);
                 c.start();
                 c.wait();
               });
             })
                 .name("right_permute")
                 .compile(ring4);
  auto x = Array::generate<float>(4, Shape{256}, [](int d, std::int64_t i) { return float(d * 1000 + i); });
  auto out = exe(x);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(out[0].to_host<float>(d)[7], float(((d + 3) % 4) * 1000 + 7));
}

TEST(VerifyRing, AllGatherPassesAndRuns) {
  // out[k] = device k's x: forward the block received last step to the right.
  auto exe = kernel([](VmemRef<const float, 8> x, VmemRef<float, n, 8> out) {
               auto me = axis_index("x");
               auto right = (me + 1) % n, left = (me + n - 1) % n;
               run_scoped([&](RegularSemaphore ready, DmaSemaphore local, DmaSemaphore send, DmaSemaphores<n - 1> recv) {
                 semaphore_signal(ready, 1, left);  // my out may be written now
                 semaphore_wait(ready, 1);
                 auto own = make_async_copy(x, out.at(me), local);
                 own.start();
                 for (int s = 0; s < n - 1; ++s) {
                   auto slot = (me + n - s) % n;          // the block I forward
                   auto incoming = (me + n - s - 1) % n;  // the block I receive
                   auto c = s == 0 ? make_async_remote_copy(x, out.at(slot), send, recv.at(s), right)
                                   : make_async_remote_copy(out.at(slot), out.at(slot), send, recv.at(s), right);
                   c.start();
                   c.wait_send();
                   make_async_remote_copy(out.at(incoming), out.at(incoming), send, recv.at(s), right).wait_recv();
                 }
                 own.wait();
               });
             })
                 .name("all_gather")
                 .compile(ring4);
  auto x = Array::generate<float>(n, Shape{8}, [](int d, std::int64_t i) { return float(d * 100 + i); });
  auto out = exe(x);
  for (int d = 0; d < n; ++d) {
    auto v = out[0].to_host<float>(d);
    for (int k = 0; k < n; ++k) EXPECT_EQ(v[static_cast<std::size_t>(k * 8 + 3)], float(k * 100 + 3)) << d << " " << k;
  }
}

TEST(VerifyRing, BidirectionalExchangeWithOwnSemaphoresPasses) {
  auto g = trace_for(ring4, [](VmemRef<const float, 8> x, VmemRef<float, 2, 8> out) {
    auto me = axis_index("x");
    run_scoped([&](RegularSemaphores<2> ready, DmaSemaphores<2> send, DmaSemaphores<2> recv) {
      semaphore_signal(ready.at(0), 1, (me + 3) % 4);
      semaphore_signal(ready.at(1), 1, (me + 1) % 4);
      semaphore_wait(ready.at(0), 1);
      semaphore_wait(ready.at(1), 1);
      auto r = make_async_remote_copy(x, out.at(0), send.at(0), recv.at(0), (me + 1) % 4);
      auto l = make_async_remote_copy(x, out.at(1), send.at(1), recv.at(1), (me + 3) % 4);
      r.start();
      l.start();
      r.wait();
      l.wait();
    });
  });
  EXPECT_NO_THROW(passes::verify(g));
}

}  // namespace
