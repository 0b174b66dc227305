// A dot whose result is only stored into, or accumulated into, a Ref region
// writes that region itself (passes/fuse.hpp: fuse_dot_store): the results
// are bit-identical to a separate dot and store / accumulation, also where
// the GEMM blocks the depth or the region is strided (both through a result
// buffer), and an operand read from the region it writes is copied first.

#include <gtest/gtest.h>

#include <random>
#include <type_traits>

#include "support/graph_testing.hpp"
#include <refx/ir/gemm.hpp>
#include <refx/passes/pipeline.hpp>

using namespace refx;
using namespace refx::testing;
using namespace refx::graph_testing;

namespace {

/// Floats over a wide range of magnitudes: sums associated differently round differently.
template <class T = float>
std::vector<T> spread(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(std::ldexp(mantissa(rng), exponent(rng)));
  return v;
}

std::size_t dots_writing_refs(const Graph& g) {
  std::size_t n = 0;
  for (OpId o : g.block(0).ops)
    if (g.op(o).prim->name == "dot" && g.op(o).view_count == 1) ++n;
  return n;
}

TEST(FuseDot, StoreOfADotWritesTheRef) {
  constexpr std::int64_t m = 24, k = 40, n = 16;
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{m, k}, spread(m * k, 1)));
  args.push_back(make_buffer<float>(Shape{k, n}, spread(k * n, 2)));
  args.emplace_back(DType::f32, Shape{m, n});
  const Graph g = fused_matches_unfused(
      [](VmemRef<const float, m, k> a, VmemRef<const float, k, n> b, VmemRef<float, m, n> c) {
        c.store(dot(a.load(), b.load()));
      },
      args);
  EXPECT_EQ(dots_writing_refs(g), 1u) << to_text(g);
  EXPECT_EQ(live_ops(g, "store"), 0u) << to_text(g);
  EXPECT_NE(to_text(g).find("dot[store]"), std::string::npos) << to_text(g);
}

// acc += dot(a, b) with f32 results: bf16 operands with b transposed, over
// one panel of widened operands and over several (k above bf16_dot_panel);
// f32 operands over a depth the GEMM takes whole (it adds into the Ref) and
// one it blocks (through a result buffer, else the sums would round
// differently).
template <class T, std::int64_t K>
void accumulation_matches_unfused() {
  constexpr std::int64_t m = 16, n = 24;
  constexpr bool narrow = std::is_same_v<T, bf16>;
  using BRef = VmemRef<const T, narrow ? n : K, narrow ? K : n>;
  std::vector<Buffer> args;
  args.push_back(make_buffer<T>(Shape{m, K}, spread<T>(m * K, 3)));
  args.push_back(make_buffer<T>(narrow ? Shape{n, K} : Shape{K, n}, spread<T>(n * K, 4)));
  args.push_back(make_buffer<float>(Shape{m, n}, spread(m * n, 5)));
  const Graph g = fused_matches_unfused(
      [](VmemRef<const T, m, K> a, BRef b, VmemRef<float, m, n> acc) {
        if constexpr (narrow) acc += dot<float>(a.load(), b.load(), trans_b);
        else acc += dot(a.load(), b.load());
      },
      args);
  EXPECT_EQ(dots_writing_refs(g), 1u) << to_text(g);
  const std::string printed = narrow ? "dot[preferred=f32,trans_b,accum]" : "dot[accum]";
  EXPECT_NE(to_text(g).find(printed), std::string::npos) << to_text(g);
}

TEST(FuseDot, AccumulationMatchesUnfused) {
  accumulation_matches_unfused<bf16, 128>();
  accumulation_matches_unfused<bf16, 600>();
  accumulation_matches_unfused<float, 96>();
  accumulation_matches_unfused<float, 2048>();
  // The last depth is one the GEMM blocks on every cache size Eigen plans for.
  EXPECT_TRUE(refx::detail::gemm_adds_whole_sums(DType::f32, 16));
  EXPECT_FALSE(refx::detail::gemm_adds_whole_sums(DType::f32, 2048));
}

TEST(FuseDot, StridedRegionsAndF64) {
  constexpr std::int64_t m = 8, k = 12, n = 6;
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{m, k}, spread(m * k, 9)));
  args.push_back(make_buffer<float>(Shape{k, n}, spread(k * n, 10)));
  args.push_back(make_buffer<float>(Shape{m, 3 * n}, spread(m * 3 * n, 11)));
  std::vector<double> wide(static_cast<std::size_t>(m * k));
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = 1.0 / static_cast<double>(i + 3);
  args.push_back(make_buffer<double>(Shape{m, k}, wide));
  args.push_back(make_buffer<double>(Shape{m, m}, std::vector<double>(m * m, 0.25)));
  const Graph g = fused_matches_unfused(
      [](VmemRef<const float, m, k> a, VmemRef<const float, k, n> b, VmemRef<float, m, 3 * n> c,
         VmemRef<const double, m, k> x, VmemRef<double, m, m> y) {
        c.at(ds(0, m), ds(n, n)).store(dot(a.load(), b.load()));  // columns n..2n: rows apart
        c.at(ds(0, m), ds(2 * n, n)) += dot(a.load(), b.load());
        y += dot(x.load(), x.load(), trans_b);
      },
      args);
  EXPECT_EQ(dots_writing_refs(g), 3u) << to_text(g);
}

// acc = acc' acc: the operand is read from the region the dot writes, so
// its load copies (never borrows the memory being written).
TEST(FuseDot, AnOperandReadFromTheWrittenRegionIsCopied) {
  constexpr std::int64_t m = 32;
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{m, m}, spread(m * m, 12)));
  args.push_back(make_buffer<float>(Shape{m, m}, spread(m * m, 13)));
  const Graph g = fused_matches_unfused(
      [](VmemRef<float, m, m> acc, VmemRef<const float, m, m> w) { acc.store(dot(acc.load(), w.load())); }, args);
  EXPECT_EQ(dots_writing_refs(g), 1u) << to_text(g);
  std::size_t borrowed = 0;
  for (OpId o : g.block(0).ops)
    if (g.op(o).prim == &prim::load && prim::load_reads_in_place(g, g.op(o))) ++borrowed;
  EXPECT_EQ(borrowed, 1u) << "only w's load may read in place\n" << to_text(g);
}

TEST(FuseDot, OtherUsesAndOtherResultTypesKeepTheValue) {
  constexpr std::int64_t m = 8, k = 16, n = 8;
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{m, k}, spread(m * k, 14)));
  args.push_back(make_buffer<float>(Shape{k, n}, spread(k * n, 15)));
  args.emplace_back(DType::f32, Shape{m, n});
  args.emplace_back(DType::f32, Shape{m, n});
  args.push_back(make_buffer<std::int8_t>(Shape{m, k}, std::vector<std::int8_t>(m * k, 3)));
  args.emplace_back(DType::i32, Shape{m, m});
  args.push_back(make_buffer<bf16>(Shape{m, k}, spread<bf16>(m * k, 16)));
  args.emplace_back(DType::bf16, Shape{m, m});
  const Graph g = fused_matches_unfused(
      [](VmemRef<const float, m, k> a, VmemRef<const float, k, n> b, VmemRef<float, m, n> c, VmemRef<float, m, n> d,
         VmemRef<const std::int8_t, m, k> i, VmemRef<std::int32_t, m, m> ic, VmemRef<const bf16, m, k> h,
         VmemRef<bf16, m, m> hc) {
        auto p = dot(a.load(), b.load());  // two uses
        c.store(p);
        d.store(p);
        ic.store(dot<std::int32_t>(i.load(), i.load(), trans_b));  // integer results
        hc.store(dot(h.load(), h.load(), trans_b));          // narrow float results
      },
      args);
  EXPECT_EQ(dots_writing_refs(g), 0u) << to_text(g);
  EXPECT_EQ(live_ops(g, "store"), 4u) << to_text(g);
}

}  // namespace
