// Trace-time checks: each raises refx::TraceError whose message names the
// user's file and the line of the offending statement (captured with
// __LINE__ on that same line).

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>

#include "support/testing.hpp"

using namespace refx;
using refx::testing::has_all;
using refx::testing::throws_with;
using refx::testing::thrown;

namespace {

using I32 = std::int32_t;

/// "trace_errors_test.cpp:<line>" followed by the character refx prints after
/// a location, so that line 12 does not match line 123.
std::string here(int line, char after = ')') {
  return refx::testing::at_line("trace_errors_test.cpp", line) + after;
}

// ---------------------------------------------------------------- shapes

TEST(TraceErrors, DynamicShapeMismatchInStore) {
  int line = 0;
  auto f = [&] {
    trace([&](Ref<float, extents<dyn>> x) {
      line = __LINE__; x.store(full<float, 4>(1.0f));
    }, {Shape{8}});
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"store", "shape mismatch", "[4]", "[8]", here(line)}; }));
}

TEST(TraceErrors, DynamicShapeMismatchInAccumThroughAView) {
  int line = 0;
  auto f = [&] {
    trace([&](Ref<float, extents<dyn, dyn>> x, Ref<const float, extents<dyn>> y) {
      line = __LINE__; x.at(1) += y.load();
    }, {Shape{2, 3}, Shape{2}});
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"accum", "shape mismatch", "[2]", "[3]", here(line)}; }));
}

TEST(TraceErrors, WrongNumberOfShapes) {
  int line = 0;
  auto kernel = [](Ref<float, extents<dyn>>, Ref<float, extents<dyn>>) {};
  auto f = [&] { line = __LINE__; (void)trace(kernel, {Shape{8}}); };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"1 shapes given for 2 parameters", here(line)}; }));
  auto g = [&] { line = __LINE__; (void)trace(kernel, {Shape{8}, Shape{8}, Shape{8}}); };
  EXPECT_TRUE(has_all(thrown<TraceError>(g), [&] { return std::vector<std::string>{"3 shapes given for 2 parameters", here(line)}; }));
}

TEST(TraceErrors, MissingShapeForDynamicExtents) {
  int line = 0;
  auto f = [&] { line = __LINE__; (void)trace([](VmemRef<float, 4>, Ref<float, extents<dyn>>) {}); };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"parameter 1 has dynamic extents", here(line)}; }));
}

TEST(TraceErrors, ShapeDisagreesWithStaticExtents) {
  int line = 0;
  auto f = [&] { line = __LINE__; (void)trace([](Ref<float, extents<4, dyn>>) {}, {Shape{5, 2}}); };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"[5,2]", "parameter 0", "static extents", here(line)}; }));
  auto g = [&] { line = __LINE__; (void)trace([](Ref<float, extents<4, dyn>>) {}, {Shape{4}}); };
  EXPECT_TRUE(has_all(thrown<TraceError>(g), [&] { return std::vector<std::string>{"parameter 0", "static extents", here(line)}; }));
}

TEST(TraceErrors, RunScopedShapesMustMatchItsParameters) {
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 4>) {
      line = __LINE__; run_scoped({Shape{4}, Shape{4}}, [](Ref<float, extents<dyn>>) {});
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"2 shapes given for 1 parameters", here(line)}; }));
  auto g = [&] {
    trace([&](VmemRef<float, 4>) {
      line = __LINE__; run_scoped([](Ref<float, extents<dyn>>) {});
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(g), [&] { return std::vector<std::string>{"dynamic extents", here(line)}; }));
}

TEST(TraceErrors, ForiLoopCarryChangesRuntimeShape) {
  int line = 0;
  auto f = [&] {
    trace([&](Ref<const float, extents<dyn>> a, Ref<const float, extents<dyn>> b) {
      line = __LINE__; (void)fori_loop(0, 2, [&](Scalar<I32>, Value<float, extents<dyn>>) { return b.load(); }, a.load());
    }, {Shape{4}, Shape{5}});
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"fori_loop carry 0 changes type", "f32[4]", "f32[5]", here(line)}; }));
}

// ---------------------------------------------------------------- bounds

TEST(TraceErrors, OutOfBoundsStaticSliceIsReportedAtTheUse) {
  int view_line = 0, use_line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 8> x, VmemRef<float, 4> y) {
      view_line = __LINE__; auto v = x.at(ds(6, 4));
      // Building the view reads nothing; the load is where it fails.
      use_line = __LINE__; y.store(v.load());
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{".at(...)", "out of bounds", "6..9", "size 8", here(use_line)}; }));
  try {
    f();
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).find(here(view_line)), std::string::npos) << e.what();
  }
}

TEST(TraceErrors, OutOfBoundsIsInheritedByNestedViewsAndStores) {
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 8> x) {
      auto bad = x.at(ds(5, 4));
      auto inner = bad.at(ds(0, 2));  // in bounds of `bad`, but `bad` itself is not
      line = __LINE__; inner.store(0.0f);
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"out of bounds", here(line)}; }));
}

TEST(TraceErrors, OutOfBoundsInsideALoopBodyNamesTheBodyLine) {
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 4, 8> x) {
      fori_loop(0, 4, [&](Scalar<I32> i) {
        line = __LINE__; x.at(i, ds(4, 8)) += 1.0f;
      });
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"out of bounds", "dimension 1", here(line)}; }));
}

// ---------------------------------------------------------------- aliasing

TEST(TraceErrors, SameRefPassedTwiceToAKernelCall) {
  auto copy = [](VmemRef<float, 8> dst, VmemRef<float, 8> src) { dst.store(src.load()); };
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 8> x) {
      line = __LINE__; refx::call(copy)(x, x);
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"same Ref is passed twice", "arguments 0 and 1", here(line)}; }));
}

TEST(TraceErrors, OverlappingViewsPassedToAKernelCall) {
  auto add_into = [](Ref<float, extents<dyn>> dst, Ref<const float, extents<dyn>> src) { dst += src.load(); };
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 8> x) {
      line = __LINE__; refx::call(add_into)(x.at(ds(0, 4)), x.at(ds(3, 4)));  // element 3 is shared
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"passed twice", here(line)}; }));
}

TEST(TraceErrors, KernelCallsThatDoNotAliasAreFine) {
  auto add_into = [](Ref<float, extents<dyn>> dst, Ref<const float, extents<dyn>> src) { dst += src.load(); };
  auto sum2 = [](Ref<const float, extents<8>> a, Ref<const float, extents<8>> b, VmemRef<float, 8> out) {
    out.store(a.load() + b.load());
  };
  Graph g = trace([&](VmemRef<float, 8> x, VmemRef<float, 8> y) {
    refx::call(add_into)(x.at(ds(0, 4)), x.at(ds(4, 4)));      // disjoint halves
    refx::call(add_into)(x.at(ds(0, 4, 2)), x.at(ds(1, 4, 2)));  // even and odd elements
    Ref<const float, extents<8>, Vmem> ro = x;
    refx::call(sum2)(ro, ro, y);  // the same Ref twice, read-only both times
  });
  Buffer bx = refx::testing::make_buffer<float>(Shape{8}, {1, 2, 3, 4, 5, 6, 7, 8}), by(DType::f32, Shape{8});
  interpret(g, bx, by);
  // x[0..4) += x[4..8): 6 8 10 12 5 6 7 8; then even += odd: 14 8 22 12 11 6 15 8.
  EXPECT_EQ(refx::testing::contents<float>(bx), (std::vector<float>{14, 8, 22, 12, 11, 6, 15, 8}));
  EXPECT_EQ(refx::testing::contents<float>(by), (std::vector<float>{28, 16, 44, 24, 22, 12, 30, 16}));
}

// ---------------------------------------------------------------- scopes

TEST(TraceErrors, RefUsedAfterItsScopeEnded) {
  int scope_line = 0, line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 8> y) {
      VmemRef<float, 8> leaked;
      scope_line = __LINE__; run_scoped([&](VmemRef<float, 8> s) { s.store(1.0f); leaked = s; });
      line = __LINE__; y.store(leaked.load());
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"used after its scope ended", here(line), here(scope_line, ';')}; }));
}

TEST(TraceErrors, RunStateRefUsedAfterItsScopeEnded) {
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 4> y) {
      VmemRef<float, 4> leaked;
      (void)run_state(full<float, 4>(0.0f), [&](VmemRef<float, 4> r) { leaked = r; });
      line = __LINE__; leaked.store(y.load());
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"used after its scope ended", here(line)}; }));
}

TEST(TraceErrors, ViewOfARefAfterItsScopeEnded) {
  auto f = [&] {
    trace([&](VmemRef<float, 8> y) {
      VmemRef<float, 8> leaked;
      run_scoped([&](VmemRef<float, 8> s) { leaked = s; });
      y.store(leaked.at(ds<8>(0)).load());
    });
  };
  EXPECT_TRUE(throws_with<TraceError>(f, {"used after its scope ended", "trace_errors_test.cpp:"}));
}

TEST(TraceErrors, ViewOfARefAfterItsScopeEndedNamesTheUseLine) {
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 8> y) {
      VmemRef<float, 8> leaked;
      run_scoped([&](VmemRef<float, 8> s) { leaked = s; });
      line = __LINE__; y.store(leaked.at(ds<8>(0)).load());
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"used after its scope ended", here(line)}; }));
}

TEST(TraceErrors, ValueFromALoopBodyUsedOutsideIt) {
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float> y) {
      Scalar<float> leaked;
      fori_loop(0, 4, [&](Scalar<I32> i) { leaked = cast<float>(i); });
      line = __LINE__; y.store(leaked);
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"defined inside a fori_loop, when or scope body is used outside", here(line)}; }));
}

TEST(TraceErrors, LoopIndexUsedOutsideTheLoop) {
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<I32, 4> y) {
      Scalar<I32> index;
      fori_loop(0, 4, [&](Scalar<I32> i) { index = i; });
      line = __LINE__; y.at(0).store(index);
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"used outside", here(line)}; }));
}

TEST(TraceErrors, ValueFromWhenOrScopeBodyUsedOutsideIt) {
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 4> y, SmemRef<const I32> c) {
      Value<float, extents<4>> leaked;
      when(c.load() > 0, [&] { leaked = y.load() * 2.0f; });
      line = __LINE__; y.store(leaked);
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"used outside", here(line)}; }));
  auto g = [&] {
    trace([&](VmemRef<float, 4> y) {
      Value<float, extents<4>> leaked;
      run_scoped([&](VmemRef<float, 4> s) {
        s.store(1.0f);
        leaked = s.load();
      });
      line = __LINE__; y += leaked;
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(g), [&] { return std::vector<std::string>{"used outside", here(line)}; }));
}

TEST(TraceErrors, ValueUsedOutsideItsBodyInAnExpression) {
  // Operators cannot take a source location, so the error names the nearest
  // line refx saw; it must still be a TraceError naming this file.
  auto f = [&] {
    trace([&](VmemRef<float> y) {
      Scalar<float> leaked;
      fori_loop(0, 4, [&](Scalar<I32> i) { leaked = cast<float>(i); });
      y.store(leaked * 2.0f);
    });
  };
  EXPECT_TRUE(throws_with<TraceError>(f, {"used outside", "trace_errors_test.cpp:"}));
}

TEST(TraceErrors, ViewWithALoopIndexStartUsedOutsideTheLoop) {
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float, 8> x) {
      Ref<float, extents<2>, Vmem> window;
      fori_loop(0, 4, [&](Scalar<I32> i) { window = x.at(ds<2>(i * 2)); });
      line = __LINE__; window.store(1.0f);
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"used outside", here(line)}; }));
}

TEST(TraceErrors, DefaultConstructedValueUsedInAnOp) {
  int line = 0;
  auto f = [&] {
    trace([&](VmemRef<float> y) {
      Scalar<float> never_set;
      line = __LINE__; y.store(never_set);
    });
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{here(line)}; }));
}

// ---------------------------------------------------------------- outside a trace

TEST(TraceErrors, TracedOpOutsideATrace) {
  int line = 0;
  auto f = [&] { line = __LINE__; (void)axis_index("x"); };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"used outside of a trace", here(line)}; }));
}

TEST(TraceErrors, RefFromAFinishedTraceUsedLater) {
  VmemRef<float, 4> escaped;
  Graph g = trace([&](VmemRef<float, 4> x) { escaped = x; });
  int line = 0;
  auto f = [&] { line = __LINE__; (void)escaped.load(); };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"used outside of a trace", here(line)}; }));
}

// A handle kept from one trace would otherwise name whatever has the same
// number in the next one: every kind of handle is checked.
TEST(TraceErrors, HandlesFromAnotherTraceAreRejected) {
  VmemRef<float, 4> ref;
  Scalar<float> value;
  DmaSemaphore sem;
  std::optional<AsyncCopy> copy;
  (void)trace([&](VmemRef<float, 4> x, VmemRef<float, 4> y) {
    ref = y;
    value = Scalar<float>(2.0f);
    run_scoped([&](DmaSemaphore s) {
      sem = s;
      copy = make_async_copy(x, y, s);
      copy->start();
      copy->wait();
    });
  });
  const std::vector<std::string> needle{"refx: a Ref, Value, semaphore or copy descriptor made by another trace"};
  int line = 0;
  const auto in_a_new_trace = [&](auto body) {
    return [&, body] { (void)trace([&](VmemRef<float, 4> x, VmemRef<float, 4> y) { body(x, y); }); };
  };
  const auto expect_rejected = [&](auto f) {
    EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{needle[0], here(line)}; }));
  };
  expect_rejected(in_a_new_trace([&](auto x, auto) { line = __LINE__; ref.store(x.load()); }));
  expect_rejected(in_a_new_trace([&](auto x, auto) { line = __LINE__; (void)x.load(), (void)ref.at(0); }));
  expect_rejected(in_a_new_trace([&](auto x, auto y) { line = __LINE__; y.store(x.load() * value); }));
  expect_rejected(in_a_new_trace([&](auto x, auto y) { line = __LINE__; (void)make_async_copy(x, y, sem); }));
  expect_rejected(in_a_new_trace([&](auto, auto) { line = __LINE__; copy->wait(); }));
  // The same kernel traced twice makes fresh handles each time.
  const auto copy_kernel = [](VmemRef<float, 4> x, VmemRef<float, 4> y) { y.store(x.load() + 1.0f); };
  EXPECT_NO_THROW((void)trace(copy_kernel));
  EXPECT_NO_THROW((void)trace(copy_kernel));
}

// An integer literal must fit the element type it meets: int64 values that
// int32 elements cannot hold would silently wrap.
TEST(TraceErrors, IntegersThatDoNotFitTheElementTypeAreRejected) {
  const std::int64_t big = (std::int64_t{1} << 33) + 7;
  int line = 0;
  auto store = [&] { (void)trace([&](VmemRef<I32, 4> y) { line = __LINE__; y.store(big); }); };
  EXPECT_TRUE(has_all(thrown<TraceError>(store), [&] {
    return std::vector<std::string>{"the integer 8589934599 does not fit the i32 elements of the Ref it is stored into: "
                                    "it would become 7 (at ",
                                    here(line), "); use a wider element type or a value in range"};
  }));
  auto combine = [&] { (void)trace([&](VmemRef<I32, 4> y) { line = __LINE__; y.store(y.load() - big); }); };
  EXPECT_TRUE(has_all(thrown<TraceError>(combine), [&] {
    return std::vector<std::string>{"the integer 8589934599 does not fit the i32 elements it is combined with", here(line)};
  }));
  auto negative = [&] { (void)trace([&](VmemRef<I32, 4> y) { y.store(y.load() + (std::int64_t{INT32_MIN} - 1)); }); };
  EXPECT_TRUE(throws_with<TraceError>(negative, {"the integer -2147483649 does not fit"}));
  // Values in range are fine, whatever their C++ type, and keep their value.
  Graph g = trace([&](VmemRef<I32, 2> y) {
    y.at(0).store(std::int64_t{INT32_MIN});
    y.at(1).store(y.at(0).load() + std::uint64_t{INT32_MAX} + std::int64_t{INT32_MAX});
  });
  Buffer y(DType::i32, Shape{2});
  interpret(g, y);
  EXPECT_EQ(refx::testing::contents<I32>(y)[0], INT32_MIN);
  EXPECT_EQ(refx::testing::contents<I32>(y)[1], INT32_MAX - 1);
}

TEST(TraceErrors, ValueConstructorsOutsideATraceAreTraceErrors) {
  // Whatever the op, a TraceError (not a crash) explains the problem.
  EXPECT_TRUE(throws_with<TraceError>([] { (void)full<float, 4>(1.0f); }, {"used outside of a trace"}));
  EXPECT_TRUE(throws_with<TraceError>([] { (void)Scalar<I32>(3); }, {"used outside of a trace"}));
  EXPECT_TRUE(throws_with<TraceError>([] { fori_loop(0, 4, [](Scalar<I32>) {}); }, {"used outside of a trace"}));
}

TEST(TraceErrors, ValueConstructorsOutsideATraceNameTheLine) {
  int line = 0;
  auto f = [&] { line = __LINE__; (void)full<float, 4>(1.0f); };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"used outside of a trace", here(line)}; }));
  auto g = [&] { line = __LINE__; fori_loop(0, 4, [](Scalar<I32>) {}); };
  EXPECT_TRUE(has_all(thrown<TraceError>(g), [&] { return std::vector<std::string>{"used outside of a trace", here(line)}; }));
}

// ---------------------------------------------------------------- op checks

TEST(TraceErrors, OperandTypeChecksNameTheNearestLine) {
  int line = 0;
  auto f = [&] {
    trace([&](Ref<const float, extents<dyn>> a, Ref<const float, extents<dyn>> b, Ref<float, extents<dyn>> c) {
      line = __LINE__; auto x = a.load(); auto y = b.load();
      c.store(x * y);
    }, {Shape{3}, Shape{4}, Shape{3}});
  };
  EXPECT_TRUE(has_all(thrown<TraceError>(f), [&] { return std::vector<std::string>{"mul's operands do not broadcast", here(line)}; }));
}

TEST(TraceErrors, TraceErrorIsARefxError) {
  auto f = [] { (void)trace([](Ref<float, extents<dyn>>) {}); };
  EXPECT_TRUE(throws_with<refx::Error>(f, {"dynamic extents"}));
  EXPECT_TRUE(throws_with<std::runtime_error>(f, {"dynamic extents"}));
}

}  // namespace
