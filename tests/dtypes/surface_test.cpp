// The rest of the surface over the new element types: Arrays (generate,
// from_shards, to_host), literals (`x + 1.5f` on a bf16 Value, Value<bf16>
// scalars, the literal range check on u8), the graph printer and DOT (dtype
// names, bf16 constants), the timeline (bytes of a bf16 copy), debug_print
// and io_callback of bf16 values, and a user-defined primitive over bf16.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <refx/extend.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/ir/eval.hpp>
#include <refx/passes/pipeline.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

TEST(Arrays, GenerateFromShardsAndToHostKeepEveryBit) {
  const Array a = Array::generate<bf16>(3, Shape{4, 5}, [](int d, std::int64_t i) { return 0.1f * static_cast<float>(d * 20 + i); });
  EXPECT_EQ(a.dtype(), DType::bf16);
  EXPECT_EQ(a.shard(1).bytes(), 4u * 5u * 2u);
  for (int d = 0; d < 3; ++d) {
    const std::vector<bf16> h = a.to_host<bf16>(d);
    ASSERT_EQ(h.size(), 20u);
    for (std::int64_t i = 0; i < 20; ++i) EXPECT_EQ(h[static_cast<std::size_t>(i)].bits(), bf16(0.1f * static_cast<float>(d * 20 + i)).bits());
  }
  const std::vector<std::vector<f16>> shards{{f16(1.0f), std::numeric_limits<f16>::infinity(), f16::from_bits(0x0001)}};
  const Array b = Array::from_shards<f16>(shards, Shape{3});
  const auto back = b.to_host<f16>(0);
  EXPECT_EQ(back[1].bits(), 0x7C00);
  EXPECT_EQ(back[2].bits(), 0x0001);  // a subnormal survives the round trip
  const Array c = Array::generate<std::uint8_t>(1, Shape{3}, [](int, std::int64_t i) { return 254 + i; });
  EXPECT_EQ(c.to_host<std::uint8_t>(0), (std::vector<std::uint8_t>{254, 255, 0}));
}

TEST(Literals, FloatLiteralsOnHalfValuesRoundOnce) {
  // x + 1.5f, x * 0.1 (a double, rounded once into bf16), a Value<bf16> scalar
  // literal, and a bf16 literal; on f16 the same through 65504 + 16 = inf.
  auto exe = kernel([](VmemRef<const bf16, 4> x, VmemRef<bf16, 4> a, VmemRef<bf16, 4> b, VmemRef<f16, 4> c) {
               a.store(x.load() + 1.5f);
               const Scalar<bf16> k = 0.1f;  // a C++ float, rounded into bf16
               b.store(x.load() * k + 0.1);
               c.store(cast<f16>(x.load()) * 2.0f + f16(16.0f));
             })
                 .compile(Mesh{{"x", 1}});
  const std::vector<bf16> xs{bf16(1.0f), bf16(256.0f), bf16(-3.0f), bf16(40000.0f)};
  const auto out = exe(Array::from_shards<bf16>({xs}, Shape{4}));
  const auto a = out[0].to_host<bf16>(0), b = out[1].to_host<bf16>(0);
  const auto c = out[2].to_host<f16>(0);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(a[i].bits(), bf16(float(xs[i]) + 1.5f).bits()) << i;
    const bf16 prod(float(xs[i]) * float(bf16(0.1f)));
    EXPECT_EQ(b[i].bits(), bf16(float(prod) + float(bf16(0.1))).bits()) << i;
    const f16 twice(float(f16(float(xs[i]))) * 2.0f);
    EXPECT_EQ(c[i].bits(), f16(float(twice) + 16.0f).bits()) << i;
  }
  EXPECT_EQ(float(a[1]), 258.0f);  // 257.5: the spacing is 2 at 256, so 258
}

TEST(Literals, AnIntegerLiteralOutOfAU8sRangeIsATraceError) {
  try {
    (void)trace([](VmemRef<std::uint8_t, 4> x) { x.store(x.load() + 300); });
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_TRUE(contains(e.what(), "refx: the integer 300 does not fit the u8 elements")) << e.what();
  }
}

TEST(Printing, PrinterAndDotNameTheTypesAndConstants) {
  const Graph g = trace([](VmemRef<const bf16, 8> x, VmemRef<f16, 8> y, VmemRef<std::uint32_t, 8> z) {
    y.store(cast<f16>(x.load() * bf16(1.5f)));
    z.store(cast<std::uint32_t>(x.load()) + 7u);
  });
  const std::string text = to_text(g);
  for (std::string_view part : {"Ref{bf16[8]", "Ref{f16[8]", "Ref{u32[8]", "bf16[8]", "1.5", "u32[8]"})
    EXPECT_TRUE(contains(text, part)) << "missing \"" << part << "\" in\n" << text;
  EXPECT_TRUE(contains(fmt::format("{}", g), "bf16[8]"));
  const std::string dot = to_dot(g, passes::dependency_edges(g));
  EXPECT_TRUE(contains(dot, "digraph")) << dot;
  EXPECT_TRUE(contains(dot, "cast")) << dot;
  EXPECT_EQ(fmt::format("{} {} {} {} {}", DType::bf16, DType::f16, DType::i8, DType::u8, DType::u32), "bf16 f16 i8 u8 u32");
}

TEST(Timeline, ABf16CopyIsRecordedWithItsBytes) {
  Watchdog dog(kTestLimit, "timeline of a bf16 copy");
  Runtime rt;
  auto exe = kernel([](HbmRef<const bf16, 300> x, HbmRef<bf16, 300> y) {
               sync_copy(x, y);
             })
                 .name("bf16_copy")
                 .compile(Mesh{{"x", 1}}, {}, rt);
  rt.start_timeline();
  const auto out = exe(Array::generate<bf16>(1, Shape{300}, [](int, std::int64_t i) { return static_cast<float>(i); }, rt));
  EXPECT_EQ(float(out[0].to_host<bf16>(0)[299]), 300.0f);  // 299 -> 300 in bf16 (spacing 2)
  const std::string json = rt.stop_timeline().json();
  EXPECT_TRUE(contains(json, "\"copy_bytes\":600")) << json.substr(0, 2000);
  EXPECT_TRUE(contains(json, "bf16_copy"));
}

/// A single-device env that records host effects instead of printing them.
class CapturingEnv : public ExecEnv {
 public:
  void host_effect(ExecContext&, const Op& op, std::unique_ptr<HostEffect> e) override {
    if (auto error = perform_host_effect(*e, op, [this](std::string_view s) { lines.emplace_back(s); }))
      std::rethrow_exception(error);
  }
  std::vector<std::string> lines;
};

TEST(HostEffects, DebugPrintAndIoCallbackSeeBf16Values) {
  std::vector<float> seen;
  float scalar_seen = 0;
  const Graph g = trace([&](VmemRef<const bf16, 3> x) {
    debug_print("x={} s={} h={:.3f}", x.load(), x.at(1).load(), cast<f16>(x.load()));
    io_callback([&](std::span<const bf16> v, bf16 s) {
      for (bf16 e : v) seen.push_back(e);
      scalar_seen = s;
    }, x.load(), x.at(2).load());
  });
  Buffer x = Buffer::from<bf16>(Shape{3}, std::vector<bf16>{bf16(1.0f), bf16(0.1f), bf16(-2.5f)});
  CapturingEnv env;
  interpret(g, std::vector<Buffer*>{&x}, env);
  ASSERT_EQ(env.lines.size(), 1u);
  // Halves print as their f32 value (bf16(0.1) is 0.10009765625), as refx formats a bf16 anywhere.
  const std::string tenth = fmt::format("{}", bf16(0.1f));
  EXPECT_TRUE(tenth.starts_with("0.100097")) << tenth;
  EXPECT_EQ(env.lines[0], fmt::format("x=[1, {0}, -2.5] s={0} h=[1.000, 0.100, -2.500]", tenth));
  EXPECT_EQ(seen, (std::vector<float>{1.0f, float(bf16(0.1f)), -2.5f}));
  EXPECT_EQ(scalar_seen, -2.5f);
}

// ---------------------------------------------------------------- a user primitive over bf16

void fma_abstract(AbstractContext& c) {
  if (c.num_inputs() != 3) c.fail("takes 3 operands, got {}", c.num_inputs());
  extend::elementwise_same_type(c);
  if (!is_floating(c.input(0).dtype)) c.fail("needs floating-point operands, not {}", c.input(0).dtype);
}
/// x * y + z computed in compute_t<T> and rounded once (a fused multiply-add
/// for halves: f32 holds the product of two halves exactly).
ExecStatus fma_impl(ExecContext& ctx, const Op& op) {
  const Buffer &x = ctx.in(op, 0), &y = ctx.in(op, 1), &z = ctx.in(op, 2);
  Buffer& out = ctx.out(op, 0);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (is_floating_v<T>)
      for (std::int64_t i = 0; i < out.size(); ++i)
        out.data<T>()[i] = static_cast<T>(static_cast<C>(x.data<T>()[i]) * static_cast<C>(y.data<T>()[i]) +
                                          static_cast<C>(z.data<T>()[i]));
  });
  return ExecStatus::done;
}
const Primitive& fma_p = define_primitive(Primitive{.name = "dtypes_test_fma", .abstract_eval = fma_abstract, .impl = fma_impl});

template <class T, class E>
Value<T, E> fused_mul_add(const Value<T, E>& x, const Value<T, E>& y, const Value<T, E>& z,
                std::source_location loc = std::source_location::current()) {
  return extend::bind<T, E>(fma_p, x, y, z, loc);
}

TEST(Extend, AUserPrimitiveOverBf16RoundsOnce) {
  // 1.0078125^2 - 1.015625 = 2^-14 exactly when rounded once; a bf16
  // product (1.015625) and then the sum would give 0.
  auto body = [](VmemRef<const bf16, 2> x, VmemRef<bf16, 2> y) {
    const auto v = x.load();
    y.store(fused_mul_add(v, v, full<bf16, 2>(bf16(-1.015625f))));
  };
  const std::vector<bf16> xs{bf16(1.0078125f), bf16(3.0f)};
  const auto out = kernel(body).compile(Mesh{{"x", 1}})(Array::from_shards<bf16>({xs}, Shape{2}));
  const auto y = out[0].to_host<bf16>(0);
  EXPECT_EQ(float(y[0]), 0x1p-14f);
  EXPECT_EQ(y[1].bits(), bf16(3.0f * 3.0f - 1.015625f).bits());  // 7.984375, a tie: 8
  // The interpreter agrees, and the printed graph names the primitive and the type.
  const Graph g = trace(body);
  EXPECT_TRUE(contains(to_text(g), "dtypes_test_fma")) << to_text(g);
  Buffer bx = Buffer::from<bf16>(Shape{2}, xs), by(DType::bf16, Shape{2});
  interpret(g, bx, by);
  EXPECT_EQ(by.data<bf16>()[0].bits(), y[0].bits());
  // An integer operand is refused at trace time, naming the primitive.
  EXPECT_THROW((void)trace([](VmemRef<std::int8_t, 2> x) { x.store(fused_mul_add(x.load(), x.load(), x.load())); }), TraceError);
}

}  // namespace
