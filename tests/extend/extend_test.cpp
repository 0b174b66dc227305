// refx::extend: user-defined primitives (bind, abstract evaluation helpers)
// and graph walking. (docs/extend.md's quotes of examples/extend_mul_add.cpp
// are checked by tests/docs.)

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <refx/extend.hpp>
#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/ir/eval.hpp>

using namespace refx;

namespace {

void mul_add_abstract(AbstractContext& c) {
  if (c.num_inputs() != 3) c.fail("takes 3 operands, got {}", c.num_inputs());
  extend::elementwise_same_type(c);
  if (c.input(0).dtype == DType::pred) c.fail("needs numeric operands, not bool");
}

ExecStatus mul_add_impl(ExecContext& ctx, const Op& op) {
  const Buffer &x = ctx.in(op, 0), &y = ctx.in(op, 1), &z = ctx.in(op, 2);
  Buffer& out = ctx.out(op, 0);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      for (std::int64_t i = 0; i < out.size(); ++i)
        out.data<T>()[i] = static_cast<T>(x.data<T>()[i] * y.data<T>()[i] + z.data<T>()[i]);
    }
  });
  return ExecStatus::done;
}

void mul_add_print(const Graph& g, const Op& op, std::string& out) {
  out += fmt::format("fma.{}", g.type(g.outputs(op)[0]).dtype);
}

const Primitive& mul_add_p = define_primitive(Primitive{
    .name = "mul_add", .abstract_eval = mul_add_abstract, .impl = mul_add_impl, .print = mul_add_print});

template <class T, class E>
Value<T, E> mul_add(const Value<T, E>& x, const Value<T, E>& y, const Value<T, E>& z,
                    std::source_location loc = std::source_location::current()) {
  return extend::bind<T, E>(mul_add_p, x, y, z, loc);
}

// Two outputs: (max(x, 0), min(x, 0)).
void split_sign_abstract(AbstractContext& c) {
  extend::elementwise_same_type(c);
  c.add_output(c.input(0));
}
ExecStatus split_sign_impl(ExecContext& ctx, const Op& op) {
  const Buffer& x = ctx.in(op, 0);
  Buffer &pos = ctx.out(op, 0), &neg = ctx.out(op, 1);
  for (std::int64_t i = 0; i < x.size(); ++i) {
    const float v = x.data<float>()[i];
    pos.data<float>()[i] = v > 0 ? v : 0.0f;
    neg.data<float>()[i] = v < 0 ? v : 0.0f;
  }
  return ExecStatus::done;
}
const Primitive& split_sign_p =
    define_primitive(Primitive{.name = "test_split_sign", .abstract_eval = split_sign_abstract, .impl = split_sign_impl});

// No outputs: fills a Ref's region with attrs[0] (a Write effect on view 0).
void fill_abstract(AbstractContext& c) {
  if (c.num_views() != 1 || c.num_attrs() != 1) c.fail("takes a Ref and a value");
  c.add_effect(effect_write, c.view(0));
}
ExecStatus fill_impl(ExecContext& ctx, const Op& op) {
  const ResolvedView v = ctx.view(op, 0);
  Buffer b(v.buffer->dtype(), v.shape);
  for (float& x : b.span<float>()) x = static_cast<float>(extend::attr_as_double(ctx.attr(op, 0)));
  write_view(v, b);
  return ExecStatus::done;
}
const Primitive& fill_p = define_primitive(Primitive{.name = "test_fill", .abstract_eval = fill_abstract, .impl = fill_impl});

using In = VmemRef<const float, 4, 8>;
using Out = VmemRef<float, 4, 8>;

Buffer iota_buffer(float scale, float offset) {
  std::vector<float> v(32);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(i % 9) + offset;
  return Buffer::from(Shape{4, 8}, v);
}

}  // namespace

TEST(Extend, UserPrimitiveTracesWithItsOutputType) {
  auto g = trace([](In x, In y, In z, Out out) {
    auto r = mul_add(x.load(), y.load(), z.load());
    static_assert(std::is_same_v<decltype(r), Value<float, extents<4, 8>>>);
    out.store(r);
  });
  const auto ops = extend::find_ops(g, mul_add_p);
  ASSERT_EQ(ops.size(), 1u);
  const Op& op = g.op(ops[0]);
  ASSERT_EQ(g.outputs(op).size(), 1u);
  const ValueType& t = g.type(g.outputs(op)[0]);
  EXPECT_EQ(t.dtype, DType::f32);
  EXPECT_EQ(t.kind, ValueKind::array);
  EXPECT_EQ(t.shape, (Shape{4, 8}));
  EXPECT_EQ(g.inputs(op).size(), 3u);
  EXPECT_TRUE(g.effects(op).empty());
  EXPECT_NE(fmt::format("{}", op.loc).find("extend_test.cpp"), std::string::npos);
}

TEST(Extend, AbstractEvalRejectsMismatchedDtypes) {
  try {
    trace([](In x, VmemRef<const std::int32_t, 4, 8> y, In z, Out out) {
      out.store(extend::bind<float, extents<4, 8>>(mul_add_p, x.load(), y.load(), z.load()));
    });
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("mul_add"), std::string::npos) << m;
    EXPECT_NE(m.find("operand 1 is i32"), std::string::npos) << m;
    EXPECT_NE(m.find("extend_test.cpp"), std::string::npos) << m;
  }
}

TEST(Extend, AbstractEvalRejectsMismatchedShapesAtTheCallersLine) {
  std::uint_least32_t line = 0;
  try {
    trace([&line](In x, VmemRef<const float, 8, 4> y, In z, Out out) {
      const auto here = std::source_location::current();
      line = here.line();
      out.store(extend::bind<float, extents<4, 8>>(mul_add_p, x.load(), y.load(), z.load(), here));
    });
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("operand 1 has shape [8,4]"), std::string::npos) << m;
    EXPECT_NE(m.find("extend_test.cpp:" + std::to_string(line)), std::string::npos) << m;
  }
}

TEST(Extend, BindChecksTheHandleTypeAgainstTheAbstractEval) {
  EXPECT_THROW(trace([](In x, In y, In z, VmemRef<std::int32_t, 4, 8> out) {
                 out.store(extend::bind<std::int32_t, extents<4, 8>>(mul_add_p, x.load(), y.load(), z.load()));
               }),
               TraceError);
  EXPECT_THROW(trace([](In x, In y, In z, Out) { (void)extend::bind<float, extents<8, 4>>(mul_add_p, x.load(), y.load(), z.load()); }),
               TraceError);
  // A dyn extent in the handle accepts any size.
  EXPECT_NO_THROW(trace([](In x, In y, In z, Out) { (void)extend::bind<float, extents<4, dyn>>(mul_add_p, x.load(), y.load(), z.load()); }));
  // One output expected, two produced.
  EXPECT_THROW(trace([](In x, Out) { (void)extend::bind<float, extents<4, 8>>(split_sign_p, x.load()); }), TraceError);
}

TEST(Extend, BindOutsideATraceThrows) {
  EXPECT_THROW((void)extend::bind<float>(mul_add_p), TraceError);
}

TEST(Extend, UserPrimitiveInterprets) {
  auto g = trace([](In x, In y, In z, Out out) { out.store(mul_add(x.load(), y.load(), z.load())); });
  Buffer x = iota_buffer(1.0f, 0.0f), y = iota_buffer(0.5f, 1.0f), z = iota_buffer(-1.0f, 3.0f), out(DType::f32, Shape{4, 8});
  interpret(g, x, y, z, out);
  const auto xs = x.to_vector<float>(), ys = y.to_vector<float>(), zs = z.to_vector<float>(), got = out.to_vector<float>();
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], xs[i] * ys[i] + zs[i]) << "element " << i;
}

TEST(Extend, SeveralOutputsAndEffectOnlyPrimitives) {
  auto g = trace([](In x, Out pos, Out neg, Out filled) {
    auto [p, n] = extend::bind_many<Value<float, extents<4, 8>>, Value<float, extents<4, 8>>>(split_sign_p, x.load());
    pos.store(p);
    neg.store(n);
    extend::bind_effect(fill_p, filled.at(1), extend::Attrs{extend::double_attr(2.5)});
  });
  const auto fills = extend::find_ops(g, fill_p);
  ASSERT_EQ(fills.size(), 1u);
  const auto effects = g.effects(g.op(fills[0]));
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(effects[0].bits, effect_write);
  EXPECT_EQ(g.view_shape(effects[0].view), (Shape{8}));

  Buffer x = iota_buffer(1.0f, -4.0f), pos(DType::f32, Shape{4, 8}), neg(DType::f32, Shape{4, 8}),
         filled(DType::f32, Shape{4, 8});
  filled.fill_zero();
  interpret(g, x, pos, neg, filled);
  const auto xs = x.to_vector<float>(), ps = pos.to_vector<float>(), ns = neg.to_vector<float>(),
             fs = filled.to_vector<float>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(ps[i], std::max(xs[i], 0.0f));
    EXPECT_EQ(ns[i], std::min(xs[i], 0.0f));
    EXPECT_EQ(fs[i], i / 8 == 1 ? 2.5f : 0.0f) << i;
  }
}

TEST(Extend, PrinterUsesTheCustomPrint) {
  auto g = trace([](In x, In y, In z, Out out) { out.store(mul_add(x.load(), y.load(), z.load())); });
  const std::string text = to_text(g);
  EXPECT_NE(text.find("= fma.f32 "), std::string::npos) << text;
  EXPECT_EQ(text.find("mul_add"), std::string::npos) << text;
}

TEST(Extend, RegistryFindsTheUserPrimitiveAndRejectsADuplicateName) {
  EXPECT_EQ(find_primitive("mul_add"), &mul_add_p);
  EXPECT_EQ(find_primitive("no_such_primitive"), nullptr);
  EXPECT_THROW(define_primitive(Primitive{.name = "mul_add", .abstract_eval = mul_add_abstract, .impl = mul_add_impl}),
               Error);
  EXPECT_THROW(define_primitive(Primitive{.name = "add"}), Error);  // built-ins share the namespace
  EXPECT_EQ(find_primitive("mul_add"), &mul_add_p);
}

TEST(Extend, ForEachOpVisitsNestedBodiesInProgramOrderWithDepth) {
  auto g = trace([](In x, Out out) {
    auto v = x.load();  // depth 0
    fori_loop(0, 4, [&](Scalar<std::int32_t> i) {
      auto row = x.at(i).load();  // depth 1
      when(i < 2, [&] { out.at(i).store(mul_add(row, row, row)); });  // depth 2
      out.at(i).store(row);  // depth 1
    });
    out.store(mul_add(v, v, v));  // depth 0
  });
  std::vector<std::pair<std::string, int>> seen;
  extend::for_each_op(g, [&](OpId id, const Op& op, int depth) {
    EXPECT_EQ(&g.op(id), &op);
    const std::string_view name = op.prim->name;
    if (name == "load" || name == "store" || name == "mul_add" || name == "fori_loop" || name == "when")
      seen.emplace_back(std::string(name), depth);
  });
  const std::vector<std::pair<std::string, int>> want = {
      {"load", 0}, {"fori_loop", 0}, {"load", 1}, {"when", 1},    {"mul_add", 2},
      {"store", 2}, {"store", 1},    {"mul_add", 0}, {"store", 0},
  };
  EXPECT_EQ(seen, want);

  EXPECT_EQ(extend::count_ops(g, "mul_add"), 2u);
  EXPECT_EQ(extend::count_ops(g, mul_add_p), 2u);
  EXPECT_EQ(extend::count_ops(g, "store"), 3u);
  EXPECT_EQ(extend::count_ops(g, "nothing"), 0u);
  // find_ops in program order, with either predicate form.
  const auto stores = extend::find_ops(g, [](const Op& op) { return op.prim->name == "store"; });
  ASSERT_EQ(stores.size(), 3u);
  EXPECT_EQ(stores, extend::find_ops(g, [](OpId, const Op& op) { return op.prim->name == "store"; }));
  EXPECT_EQ(g.op(stores.back()).loc.line, g.op(extend::find_ops(g, mul_add_p).back()).loc.line);

  // Walking one block only: the loop body is depth 0 there, the `when` body 1.
  int in_when = 0;
  const BlockId body = g.bodies(g.op(extend::find_ops(g, prim::fori_loop)[0]))[0];
  extend::for_each_op_in(g, body, [&](OpId, const Op&, int depth) { in_when += depth == 1 ? 1 : 0; });
  EXPECT_EQ(in_when, 2);  // mul_add, store
}
