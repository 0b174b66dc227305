// Misuse of the collectives is a refx::TraceError when the kernel is
// compiled, naming the problem and the user's line: a permute from a Ref into
// itself, outputs whose shapes do not fit the mesh, an unknown axis, and
// collectives in a kernel traced without a mesh.

#include <gtest/gtest.h>

#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

const Mesh kMesh{{"x", 4}};

/// Compiling `k` for `mesh` throws a TraceError whose message contains every needle.
template <class K>
::testing::AssertionResult trace_error(const K& k, const Mesh& mesh, std::initializer_list<std::string> needles) {
  try {
    (void)k.compile(mesh);
  } catch (const TraceError& e) {
    const std::string msg = e.what();
    for (const std::string& n : needles)
      if (msg.find(n) == std::string::npos)
        return ::testing::AssertionFailure() << "the message lacks \"" << n << "\": " << msg;
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "expected refx::TraceError, got: " << e.what();
  }
  return ::testing::AssertionFailure() << "expected refx::TraceError, the kernel compiled";
}

/// "collectives/errors_test.cpp:<line>", as refx prints the user's line.
std::string line(int l) { return here(__FILE__, l); }

// ---------------------------------------------------------------- ppermute

TEST(PpermuteErrors, FromARefIntoItself) {
  int at = 0;
  auto k = kernel([&](VmemRef<float, 8> x) {
    at = __LINE__ + 1;
    ppermute_done(ppermute_start(x, x, "x", 1));
  });
  EXPECT_TRUE(trace_error(k, kMesh, {"ppermute from a Ref into itself"}));
  EXPECT_TRUE(trace_error(k, kMesh, {line(at)}));
}

TEST(PpermuteErrors, FromASlotIntoTheSameSlot) {
  auto k = kernel([](VmemRef<float, 8> y) {
    run_scoped([&](DoubleBuffer<float, 8> buf) {
      ppermute_done(ppermute_start(buf.at(1), buf.at(1), "x", -1));
      sync_copy(buf.at(1), y);
    });
  });
  EXPECT_TRUE(trace_error(k, kMesh, {"into itself", "DoubleBuffer"}));
}

// The slot of a traced step: working_slot(buf, i) twice is the same view,
// which the tracer can prove; working_slot and receiving_slot of one step are
// two slots, which it must not reject.
TEST(PpermuteErrors, FromTheWorkingSlotOfATracedStepIntoItself) {
  auto k = kernel([](VmemRef<float, 8> y) {
    run_scoped([&](DoubleBuffer<float, 8> buf) {
      fori_loop(0, 3, [&](Scalar<std::int32_t> i) {
        ppermute_done(ppermute_start(working_slot(buf, i), working_slot(buf, i), "x", 1));
      });
      sync_copy(buf.at(0), y);
    });
  });
  EXPECT_TRUE(trace_error(k, kMesh, {"into itself"}));
}

TEST(PpermuteErrors, WorkingAndReceivingSlotsOfATracedStepAreFine) {
  auto k = kernel([](VmemRef<float, 8> y) {
    run_scoped([&](DoubleBuffer<float, 8> buf) {
      fori_loop(0, 3, [&](Scalar<std::int32_t> i) {
        ppermute_done(ppermute_start(working_slot(buf, i), receiving_slot(buf, i), "x", 1));
      });
      sync_copy(buf.at(0), y);
    });
  });
  EXPECT_NO_THROW((void)k.compile(kMesh));
}

TEST(PpermuteErrors, BetweenOverlappingRegions) {
  auto k = kernel([](VmemRef<float, 8> x) { ppermute_done(ppermute_start(x.at(ds(0, 5)), x.at(ds(3, 5)), "x", 2)); });
  EXPECT_TRUE(trace_error(k, kMesh, {"into itself"}));
}

TEST(PpermuteErrors, DisjointRegionsOfOneRefAreFine) {
  auto k = kernel([](VmemRef<float, 8> x) { ppermute_done(ppermute_start(x.at(ds(0, 4)), x.at(ds(4, 4)), "x", 1)); });
  EXPECT_NO_THROW((void)k.compile(kMesh));
}

TEST(PpermuteErrors, UnknownAxis) {
  auto k = kernel([](VmemRef<const float, 8> x, VmemRef<float, 8> y) { ppermute_done(ppermute_start(x, y, "y", 1)); });
  EXPECT_TRUE(trace_error(k, kMesh, {"no axis", "\"y\""}));
}

// ---------------------------------------------------------------- shapes

TEST(ShapeErrors, AllGatherOutputLeadingDimensionIsNotTheAxisSize) {
  int at = 0;
  auto k = kernel([&](HbmRef<const float, 8> x, HbmRef<float, 3, 8> out) {
    at = __LINE__ + 1;
    collectives::all_gather(x, out, "x");
  });
  EXPECT_TRUE(trace_error(k, kMesh, {"all_gather", "leading dimension is 3", "4 devices"}));
  EXPECT_TRUE(trace_error(k, kMesh, {line(at)}));
}

TEST(ShapeErrors, AllGatherInPlaceLeadingDimensionIsNotTheAxisSize) {
  int at = 0;
  auto k = kernel([&](HbmRef<float, 2, 8> x) {
    at = __LINE__ + 1;
    collectives::all_gather_in_place(x, "x");
  });
  EXPECT_TRUE(trace_error(k, kMesh, {"all_gather_in_place: x's leading dimension is 2", "4 devices"}));
  EXPECT_TRUE(trace_error(k, kMesh, {line(at)}));
}

TEST(ShapeErrors, AllGatherIsFineWithTheRightLeadingDimension) {
  auto k = kernel([](HbmRef<const float, 8> x, HbmRef<float, 4, 8> out) { collectives::all_gather(x, out, "x"); });
  EXPECT_NO_THROW((void)k.compile(kMesh));
}

TEST(ShapeErrors, AllToAllLeadingDimensionIsNotTheAxisSize) {
  auto k = kernel([](HbmRef<const float, 5, 2> x, HbmRef<float, 5, 2> out) { collectives::all_to_all(x, out, "x"); });
  EXPECT_TRUE(trace_error(k, kMesh, {"all_to_all", "leading dimension of 4"}));
}

TEST(ShapeErrors, ReduceScatterOutputTooShort) {
  // 10 rows on 4 devices need 3 rows of output.
  auto k = kernel([](HbmRef<const float, 10> x, HbmRef<float, 2> out) { collectives::reduce_scatter(x, out, "x"); });
  EXPECT_TRUE(trace_error(k, kMesh, {"reduce_scatter", "need 3"}));
}

// (Static extents that differ do not compile: the copy's static_assert.)
TEST(ShapeErrors, AllReduceOutOfPlaceShapesDiffer) {
  const int at = __LINE__ + 1;
  auto k = kernel([](Ref<const float, extents<dyn>, Hbm> x, Ref<float, extents<dyn>, Hbm> out) { collectives::all_reduce(x, out, "x"); });
  try {
    (void)k.compile(kMesh, {Shape{10}, Shape{8}});
    ADD_FAILURE() << "expected refx::TraceError, the kernel compiled";
  } catch (const TraceError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("all_reduce: x has shape"), std::string::npos) << msg;
    EXPECT_NE(msg.find(line(at)), std::string::npos) << msg;
  }
}

TEST(ShapeErrors, CollectiveMatmulShapesDoNotFit) {
  // out needs N * 2 = 8 rows.
  auto k = kernel([](VmemRef<const float, 2, 3> a, VmemRef<const float, 3, 5> b, VmemRef<float, 6, 5> out) {
    collectives::collective_matmul(a, b, out, "x");
  });
  EXPECT_TRUE(trace_error(k, kMesh, {"collective_matmul", "do not fit 4 devices"}));
}

TEST(ShapeErrors, AllReduceOverAnUnknownAxis) {
  auto k = kernel([](HbmRef<float, 8> x) { collectives::all_reduce(x, "rows"); });
  EXPECT_TRUE(trace_error(k, kMesh, {"no axis", "\"rows\""}));
}

// ---------------------------------------------------------------- no mesh

/// Tracing `k` without a mesh (refx::trace) throws a TraceError asking for one.
template <class K>
::testing::AssertionResult needs_a_mesh(K&& k) {
  try {
    (void)trace(std::forward<K>(k));
  } catch (const TraceError& e) {
    if (std::string(e.what()).find("mesh") == std::string::npos)
      return ::testing::AssertionFailure() << "the message does not mention the mesh: " << e.what();
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "expected refx::TraceError, got: " << e.what();
  }
  return ::testing::AssertionFailure() << "expected refx::TraceError, the kernel traced";
}

TEST(NoMesh, EveryCollectiveNeedsAMesh) {
  EXPECT_TRUE(needs_a_mesh([](HbmRef<float, 8> x) { collectives::all_reduce(x, "x"); }));
  EXPECT_TRUE(needs_a_mesh([](HbmRef<float, 8> x) {
    collectives::all_reduce(x, "x", ReduceOp::max, Direction::bidirectional, Algorithm::ring);
  }));
  EXPECT_TRUE(needs_a_mesh([](HbmRef<const float, 8> x, HbmRef<float, 8> y) { collectives::all_reduce(x, y, "x"); }));
  EXPECT_TRUE(needs_a_mesh([](HbmRef<float, 8> x) { collectives::reduce_scatter_in_place(x, "x"); }));
  EXPECT_TRUE(needs_a_mesh([](HbmRef<const float, 8> x, HbmRef<float, 2> y) { collectives::reduce_scatter(x, y, "x"); }));
  EXPECT_TRUE(needs_a_mesh([](HbmRef<const float, 8> x, HbmRef<float, 4, 8> y) { collectives::all_gather(x, y, "x"); }));
  EXPECT_TRUE(needs_a_mesh([](HbmRef<const float, 4, 2> x, HbmRef<float, 4, 2> y) { collectives::all_to_all(x, y, "x"); }));
  EXPECT_TRUE(needs_a_mesh([](VmemRef<const float, 8> x, VmemRef<float, 8> y) { ppermute_done(ppermute_start(x, y, "x", 1)); }));
  EXPECT_TRUE(needs_a_mesh([](VmemRef<const float, 2, 3> a, VmemRef<const float, 3, 5> b, VmemRef<float, 8, 5> out) {
    collectives::collective_matmul(a, b, out, "x");
  }));
}

TEST(NoMesh, TheMessageSaysHowToCompileForOne) {
  try {
    (void)trace([](HbmRef<float, 8> x) { collectives::all_reduce(x, "x"); });
    FAIL() << "expected refx::TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("compile(mesh)"), std::string::npos) << e.what();
  }
}

}  // namespace
