// Defining a primitive of your own (the jax.extend "mul_add" example):
//   mul_add(x, y, z) = x * y + z, elementwise,
// used from a kernel, printed, interpreted and checked against a plain loop;
// then a primitive with an effect on a Ref (scale_into), a user pass that
// walks the graph, and one that rewrites mul + add into mul_add at compile
// time. docs/extend.md quotes the regions between [snippet:...]
// markers; docs.Docs.FragmentsQuoteACompiledSourceVerbatim checks that the
// quotes stay identical.

#include <algorithm>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include <refx/extend.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;

// [snippet:mul_add-define]
// Abstract evaluation: from the operands' types, the output's type (and any
// effects). Errors go through c.fail, which names the user's source line.
void mul_add_abstract(AbstractContext& c) {
  if (c.num_inputs() != 3) c.fail("takes 3 operands, got {}", c.num_inputs());
  extend::elementwise_same_type(c);  // same dtype and shape -> one output like them
  if (c.input(0).dtype == DType::pred) c.fail("needs numeric operands, not bool");
}

// The loop itself, on contiguous arrays of one element type. As an
// ElementwiseFn it also lets the fusion pass chain mul_add with other ops.
void mul_add_kernel(DType t, const void* const* ins, void* out, std::int64_t n) {
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = static_cast<const T*>(ins[0]);
      const T* y = static_cast<const T*>(ins[1]);
      const T* z = static_cast<const T*>(ins[2]);
      T* o = static_cast<T*>(out);
      for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(x[i] * y[i] + z[i]);
    }
  });
}

// Implementation: concrete input buffers in, output buffer (allocated with the
// traced type by ctx.out) filled.
ExecStatus mul_add_impl(ExecContext& ctx, const Op& op) {
  const Buffer& x = ctx.in(op, 0);
  const void* ins[] = {x.data(), ctx.in(op, 1).data(), ctx.in(op, 2).data()};
  Buffer& out = ctx.out(op, 0);
  mul_add_kernel(x.dtype(), ins, out.data(), out.size());
  return ExecStatus::done;
}

// Printer: what follows "outs = " in to_text(g); the operands are appended.
void mul_add_print(const Graph& g, const Op& op, std::string& out) {
  out += fmt::format("fma.{}", g.type(g.outputs(op)[0]).dtype);
}

// Cost hint for passes that estimate work, relative to a plain elementwise op (1).
double mul_add_cost(const Graph&, const Op&) { return 2.0; }

const Primitive& mul_add_p = define_primitive(Primitive{
    .name = "mul_add",
    .abstract_eval = mul_add_abstract,
    .impl = mul_add_impl,
    .print = mul_add_print,
    .cost = mul_add_cost,
    .elementwise = mul_add_kernel,
});
// [/snippet]

// [snippet:mul_add-bind]
// The user-facing function: records one mul_add op and returns a typed Value.
// `loc` makes errors name the caller's line rather than this one.
template <class T, class E>
Value<T, E> mul_add(const Value<T, E>& x, const Value<T, E>& y, const Value<T, E>& z,
                    refx::source_location loc = refx::source_location::current()) {
  return extend::bind<T, E>(mul_add_p, x, y, z, loc);
}
// [/snippet]

// [snippet:scale_into]
// scale_into(ref, x, factor): ref = factor * x. A Ref operand becomes a view
// of the op; the abstract evaluation declares the Write effect on it, which
// the verifier and scheduler order against other ops touching that region.
void scale_into_abstract(AbstractContext& c) {
  if (c.num_inputs() != 1 || c.num_views() != 1 || c.num_attrs() != 1) c.fail("takes a Ref, a Value and a factor");
  const ValueType& ref = c.view_ref(0);
  if (ref.is_semaphore() || ref.space == MemorySpace::hbm) c.fail("needs a Vmem or Smem Ref");
  if (!is_floating(ref.dtype) || c.input(0).dtype != ref.dtype)
    c.fail("needs floating-point operands of one type, got {} and a {} Ref", c.input(0).dtype, ref.dtype);
  if (!(c.input(0).shape == c.view_shape(0))) c.fail("shape {} does not fit region {}", c.input(0).shape, c.view_shape(0));
  c.add_effect(effect_write, c.view(0));
}

ExecStatus scale_into_impl(ExecContext& ctx, const Op& op) {
  const double factor = extend::attr_as_double(ctx.attr(op, 0));
  Buffer scaled = ctx.in(op, 0).clone();
  visit_dtype(scaled.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T& v : scaled.span<T>()) v = static_cast<T>(v * factor);
  });
  write_view(ctx.view(op, 0), scaled);  // view 0, resolved and bounds-checked
  return ExecStatus::done;
}

void scale_into_print(const Graph& g, const Op& op, std::string& out) {
  out += fmt::format("scale_into[{}]", extend::attr_as_double(g.attrs(op)[0]));
}

const Primitive& scale_into_p = define_primitive(Primitive{
    .name = "scale_into", .abstract_eval = scale_into_abstract, .impl = scale_into_impl, .print = scale_into_print});

template <class R, class T, class E>
void scale_into(const R& ref, const Value<T, E>& x, double factor,
                refx::source_location loc = refx::source_location::current()) {
  extend::bind_effect(scale_into_p, ref, x, extend::Attrs{extend::double_attr(factor)}, loc);
}
// [/snippet]

// [snippet:user-pass]
// A user pass: how many mul_add ops a graph has, and how deeply the most
// nested one sits in loops, `when`s and scopes (0 = the kernel body).
struct MulAddStats {
  int count = 0;
  int max_depth = 0;
};

MulAddStats mul_add_stats(const Graph& g) {
  MulAddStats s;
  extend::for_each_op(g, [&](OpId, const Op& op, int depth) {
    if (op.prim != &mul_add_p) return;
    ++s.count;
    s.max_depth = std::max(s.max_depth, depth);
  });
  return s;
}
// [/snippet]

// [snippet:rewrite-pass]
// A rewriting pass: add(mul(a, b), c) -> mul_add(a, b, c) where the product
// has no other use. The mul, left without a use, is removed by DCE.
void fuse_mul_add(extend::Rewriter& r) {
  const Graph& g = r.graph();
  for (const OpId add : extend::find_ops(g, prim::add)) {
    const ValueId product = g.inputs(g.op(add))[0], addend = g.inputs(g.op(add))[1];
    const OpId mul = r.producer(product);
    if (mul == no_id || g.op(mul).prim != &prim::mul || r.uses(product) != 1) continue;
    const ValueId operands[] = {g.inputs(g.op(mul))[0], g.inputs(g.op(mul))[1], addend};
    r.replace(add, mul_add_p, operands);
  }
}
// [/snippet]

using Tile = VmemRef<const float, 8, 128>;
using OutTile = VmemRef<float, 8, 128>;
constexpr std::int64_t rows = 8, cols = 128, n = rows * cols;

bool check(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      fmt::print(stderr, "{}: element {} is {}, expected {}\n", what, i, got[i], want[i]);
      return false;
    }
  return true;
}

}  // namespace

int main() {
  // Small integers and halves: every result is exact in float.
  std::vector<float> xs(n), ys(n), zs(n), want(n);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    xs[k] = static_cast<float>(i % 7);
    ys[k] = 0.5f * static_cast<float>(i % 5);
    zs[k] = static_cast<float>(i % 3) - 1.0f;
    want[k] = xs[k] * ys[k] + zs[k];  // the plain loop
  }
  const Shape s{rows, cols};
  Buffer x = Buffer::from(s, xs), y = Buffer::from(s, ys), z = Buffer::from(s, zs);

  // [snippet:kernel]
  auto g = trace([](Tile x, Tile y, Tile z, OutTile out) {
    out.store(mul_add(x.load(), y.load(), z.load()));
  });
  fmt::print("{}", g);
  // [/snippet]
  Buffer out(DType::f32, s);
  interpret(g, x, y, z, out);
  bool ok = check("mul_add", out.to_vector<float>(), want);

  // The same, one row per loop iteration, and scale_into writing 2 * result.
  auto rows_g = trace([](Tile x, Tile y, Tile z, OutTile out, OutTile twice) {
    fori_loop(0, static_cast<std::int32_t>(rows), [&](Scalar<std::int32_t> i) {
      auto r = mul_add(x.at(i).load(), y.at(i).load(), z.at(i).load());
      out.at(i).store(r);
      scale_into(twice.at(i), r, 2.0);
    });
  });
  fmt::print("{}", rows_g);
  Buffer out2(DType::f32, s), twice(DType::f32, s);
  interpret(rows_g, x, y, z, out2, twice);
  std::vector<float> want2(want);
  for (float& v : want2) v *= 2.0f;
  ok = check("mul_add in fori_loop", out2.to_vector<float>(), want) && ok;
  ok = check("scale_into", twice.to_vector<float>(), want2) && ok;

  // [snippet:run-pass]
  const MulAddStats flat = mul_add_stats(g), looped = mul_add_stats(rows_g);
  fmt::print("mul_add ops: {} at depth <= {}; {} at depth <= {}\n", flat.count, flat.max_depth, looped.count,
             looped.max_depth);
  // [/snippet]
  ok = ok && flat.count == 1 && flat.max_depth == 0 && looped.count == 1 && looped.max_depth == 1 &&
       extend::count_ops(rows_g, "scale_into") == 1;

  // [snippet:compile-with-pass]
  const Executable fused = kernel([](Tile x, Tile y, Tile z, OutTile out) { out.store(x.load() * y.load() + z.load()); })
                               .passes({.fuse = false, .user_passes = {fuse_mul_add}})
                               .compile(Mesh{{"x", 1}});
  fmt::print("after the pass: {} mul_add, {} mul, {} add\n", extend::count_ops(fused.graph(), mul_add_p),
             extend::count_ops(fused.graph(), prim::mul), extend::count_ops(fused.graph(), prim::add));
  // [/snippet]
  const auto as_array = [](const std::vector<float>& v) { return Array::from_shards<float>({v}, Shape{rows, cols}); };
  const Array fused_out = fused(as_array(xs), as_array(ys), as_array(zs))[0];
  ok = check("mul then add, rewritten", fused_out.to_host<float>(0), want) && ok;
  ok = ok && extend::count_ops(fused.graph(), mul_add_p) == 1 && extend::count_ops(fused.graph(), prim::mul) == 0 &&
       extend::count_ops(fused.graph(), prim::add) == 0;

  if (!ok) {
    fmt::print(stderr, "mul_add: FAILED\n");
    return 1;
  }
  fmt::print("mul_add: ok\n");
  return 0;
}
