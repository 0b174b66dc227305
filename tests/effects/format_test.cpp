// debug_print / io_callback at the IR level: how values are formatted, the
// recorded effects, the printed graph, and the reference interpreter (one
// device, effects performed inline in program order).

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/ir/eval.hpp>

#include "effects/effects_testing.hpp"

namespace {

using namespace refx;
using namespace refx::effects_testing;

/// A single-device env that records host effects instead of printing.
class CapturingEnv : public ExecEnv {
 public:
  void host_effect(ExecContext&, const Op& op, std::unique_ptr<HostEffect> e) override {
    kinds.push_back(e->ordered ? "ordered" : "unordered");
    if (auto error = perform_host_effect(*e, op, [this](std::string_view s) { lines.emplace_back(s); }))
      std::rethrow_exception(error);
  }
  std::vector<std::string> lines;
  std::vector<std::string> kinds;
};

/// Runs a kernel of one VmemRef<float, 1> parameter; returns what it printed.
template <class K>
std::vector<std::string> interpret_prints(K k) {
  Graph g = trace(k);
  Buffer x(DType::f32, Shape{1});
  x.fill_zero();
  CapturingEnv env;
  interpret(g, std::vector<Buffer*>{&x}, env);
  return env.lines;
}

TEST(Format, ScalarsPrintAsTheirValue) {
  auto lines = interpret_prints([](VmemRef<float, 1>) {
    Scalar<std::int32_t> i = 42;
    Scalar<float> f = 2.5f;
    Scalar<double> d = 0.125;
    Scalar<std::int64_t> big = std::int64_t{1} << 40;
    debug_print("i={} f={} d={:.2f} big={} b={}", i, f, d, big, i > 3);
  });
  EXPECT_EQ(lines, std::vector<std::string>{"i=42 f=2.5 d=0.12 big=1099511627776 b=true"});
}

TEST(Format, BlocksPrintAsNestedLists) {
  auto lines = interpret_prints([](VmemRef<float, 1>) {
    auto v = iota<std::int32_t, 4>(0);
    auto m = iota<float, 2, 3>(1);
    debug_print("v={} m={} m2={:.1f}", v, m, m * 0.5f);
    debug_print("flags {}", v > 1);
  });
  EXPECT_EQ(lines, (std::vector<std::string>{"v=[0, 1, 2, 3] m=[[0, 1, 2], [0, 1, 2]] m2=[[0.0, 0.5, 1.0], [0.0, 0.5, 1.0]]",
                                             "flags [false, false, true, true]"}));
}

TEST(Format, LiteralArgumentsAndNoArguments) {
  auto lines = interpret_prints([](VmemRef<float, 1>) {
    debug_print("plain text, {{braces}}");
    debug_print(ordered, "{} + {} = {}", 1, 2.0, 3.0f);
  });
  EXPECT_EQ(lines, (std::vector<std::string>{"plain text, {braces}", "1 + 2 = 3"}));
}

TEST(Format, InterpreterRunsEffectsInlineInProgramOrder) {
  std::vector<std::string> calls;
  Buffer x = Buffer::from<float>(Shape{3}, std::vector<float>{1, 2, 3});
  Graph g = trace([&calls](VmemRef<float, 3> r) {
    debug_print(ordered, "start {}", r.load());
    fori_loop(0, 3, [&](Scalar<std::int32_t> i) {
      io_callback([&calls](std::int32_t k, std::span<const float> v) { calls.push_back(fmt::format("{} {}", k, v[0])); },
                  i, r.load());
      r.store(r.load() * 2.0f);
      debug_print("iter {}", i);
    });
  });
  CapturingEnv env;
  interpret(g, std::vector<Buffer*>{&x}, env);
  EXPECT_EQ(env.lines, (std::vector<std::string>{"start [1, 2, 3]", "iter 0", "iter 1", "iter 2"}));
  EXPECT_EQ(env.kinds, (std::vector<std::string>{"ordered", "unordered", "unordered", "unordered", "unordered",
                                                 "unordered", "unordered"}));
  EXPECT_EQ(calls, (std::vector<std::string>{"0 1", "1 2", "2 4"}));
}

TEST(Format, DefaultEnvPrintsToStdout) {
  Graph g = trace([](VmemRef<float, 1>) { debug_print("to stdout {}", 7); });
  Buffer x(DType::f32, Shape{1});
  ::testing::internal::CaptureStdout();
  interpret(g, x);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "to stdout 7\n");
}

TEST(Format, DefaultEnvReportsCallbackFailureWithLine) {
  int line = 0;
  Graph g = trace([&line](VmemRef<float, 1>) {
    line = __LINE__ + 1;
    io_callback([] { throw std::runtime_error("nope"); });
  });
  Buffer x(DType::f32, Shape{1});
  const std::string msg = runtime_error_of([&] { interpret(g, x); });
  EXPECT_TRUE(contains(msg, "io_callback at ")) << msg;
  EXPECT_TRUE(contains(msg, "format_test.cpp:" + std::to_string(line) + " raised: nope")) << msg;
}

TEST(Format, CallbacksMayTakeBuffers) {
  std::vector<std::string> got;
  Graph g = trace([&got](VmemRef<float, 2, 2> r) {
    Scalar<std::int32_t> k = 3;
    io_callback([&got](const Buffer& a, const Buffer& b) {
      got.push_back(fmt::format("{}{} {}{} {}", a.dtype(), a.shape(), b.dtype(), b.shape(), b.as_int(0)));
    }, r.load(), k);
  });
  Buffer x(DType::f32, Shape{2, 2});
  x.fill_zero();
  CapturingEnv env;
  interpret(g, x);
  EXPECT_EQ(got, std::vector<std::string>{"f32[2,2] i32[] 3"});
}

TEST(Effects, RecordedOnTheOps) {
  Graph g = trace([](VmemRef<float, 1>) {
    debug_print("u");
    debug_print(ordered, "o");
    io_callback([] {});
    io_callback(ordered, [] {});
  });
  std::vector<Effect> effects;
  for (std::size_t o = 0; o < g.num_ops(); ++o)
    for (const Effect& e : g.effects(g.op(static_cast<OpId>(o)))) effects.push_back(e);
  ASSERT_EQ(effects.size(), 4u);
  EXPECT_EQ(effects[0].bits, effect_io);
  EXPECT_EQ(effects[1].bits, effect_ordered);
  EXPECT_EQ(effects[1].token, static_cast<std::uint8_t>(OrderedEffect::debug_print));
  EXPECT_EQ(effects[2].bits, effect_io);
  EXPECT_EQ(effects[3].bits, effect_ordered);
  EXPECT_EQ(effects[3].token, static_cast<std::uint8_t>(OrderedEffect::io_callback));
  const EffectInfo info = effect_info(g);
  EXPECT_EQ(info.debug_prints, 2);
  EXPECT_EQ(info.io_callbacks, 2);
}

TEST(Effects, PrintedGraphShowsThem) {
  Graph g = trace([](VmemRef<float, 2> r) {
    debug_print(ordered, "x = \"{}\"", r.load());
    io_callback([](std::span<const float>) {}, r.load());
  });
  const std::string text = fmt::format("{}", g);
  EXPECT_TRUE(contains(text, R"(debug_print[ordered "x = \"{}\""] b)")) << text;
  EXPECT_TRUE(contains(text, "io_callback c")) << text;
}

TEST(Effects, UsedOutsideATraceIsAnError) {
  EXPECT_THROW(debug_print("x"), TraceError);
  EXPECT_THROW(io_callback([] {}), TraceError);
}

}  // namespace
