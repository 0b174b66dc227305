// jnp.transpose with axes and pltpu.einshape (docs/pallas-to-refx.md): every
// result is checked element by element against a host permutation written
// independently of refx's (an index map per letter), over 1-, 2-, 4- and
// 8-byte elements; the equations are those of jax's einshape_parse_test,
// and the ops each traces (no op for an identity, a reshape for a merge, one
// transpose of runs) are checked in the graph.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

#include <refx/refx.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

template <class T>
T element(std::int64_t i) {
  if constexpr (std::is_same_v<T, bf16>) return bf16(static_cast<float>(i % 251) - 125.0f);
  else return static_cast<T>(i % 97 - 48 + (std::is_floating_point_v<T> ? 0.25 : 0));
}

/// The host's permutation of a row-major array of extents `dims`: result
/// axis k is input axis perm[k].
template <class T>
std::vector<T> host_permute(const std::vector<T>& in, const std::vector<std::int64_t>& dims,
                            const std::vector<std::size_t>& perm) {
  const std::size_t r = dims.size();
  std::vector<std::int64_t> out_dims(r), idx(r, 0);
  for (std::size_t k = 0; k < r; ++k) out_dims[k] = dims[perm[k]];
  std::vector<T> out;
  out.reserve(in.size());
  for (std::size_t n = 0; n < in.size(); ++n) {
    std::vector<std::int64_t> from(r);
    for (std::size_t k = 0; k < r; ++k) from[perm[k]] = idx[k];
    std::int64_t at = 0;
    for (std::size_t d = 0; d < r; ++d) at = at * dims[d] + from[d];
    out.push_back(in[static_cast<std::size_t>(at)]);
    for (std::size_t k = r; k-- > 0;) {
      if (++idx[k] < out_dims[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

template <class T, class E>
Array input_array() {
  const Shape s = static_shape<E>();
  return Array::generate<T>(1, s, [](int, std::int64_t i) { return element<T>(i); });
}
template <class T>
std::vector<T> input_values(std::int64_t n) {
  std::vector<T> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(element<T>(i));
  return v;
}
template <class T>
void expect_same(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if constexpr (std::is_same_v<T, bf16>) ASSERT_EQ(got[i].bits(), want[i].bits()) << what << " at " << i;
    else ASSERT_EQ(got[i], want[i]) << what << " at " << i;
  }
}

template <class T, std::size_t... P, std::int64_t... D>
void check_transpose(extents<D...>) {
  using In = extents<D...>;
  using Out = extents<In::values[P]...>;
  auto exe = kernel([](VmemRef<const T, D...> x, Ref<T, Out, Vmem> y) { y.store(transpose<P...>(x.load())); })
                 .compile(Mesh{{"x", 1}});
  const std::int64_t n = (D * ...);
  const auto got = exe(input_array<T, In>())[0].template to_host<T>(0);
  expect_same(got, host_permute(input_values<T>(n), {D...}, {P...}),
              fmt::format("transpose<{}> of {}", fmt::join(std::vector<std::size_t>{P...}, ","),
                          fmt::join(std::vector<std::int64_t>{D...}, "x")));
}

TEST(Transpose, EveryPermutationOfThreeAxesMatchesTheHost) {
  using E = extents<3, 5, 7>;
  check_transpose<float, 0, 1, 2>(E{});
  check_transpose<float, 0, 2, 1>(E{});
  check_transpose<float, 1, 0, 2>(E{});
  check_transpose<float, 1, 2, 0>(E{});
  check_transpose<float, 2, 0, 1>(E{});
  check_transpose<float, 2, 1, 0>(E{});
}

TEST(Transpose, FourAxesAndEveryElementSize) {
  using E = extents<2, 3, 4, 33>;
  check_transpose<std::int8_t, 3, 1, 0, 2>(E{});
  check_transpose<bf16, 3, 1, 0, 2>(E{});
  check_transpose<float, 3, 1, 0, 2>(E{});
  check_transpose<double, 3, 1, 0, 2>(E{});
  check_transpose<float, 0, 2, 3, 1>(E{});  // (2, 3, 132) -> (2, 132, 3): a batch of matrices
  check_transpose<std::int8_t, 1, 0, 3, 2>(E{});
  check_transpose<float, 2, 3, 0, 1>(E{});  // (6, 132) -> (132, 6): one matrix
  check_transpose<bf16, 0, 1, 3, 2>(extents<2, 2, 40, 24>{});
  check_transpose<float, 1, 0>(extents<130, 17>{});
}

TEST(Transpose, AxesThatStayTogetherMoveAsOneOp) {
  auto exe = kernel([](VmemRef<const float, 2, 3, 4> x, VmemRef<float, 4, 2, 3> y) {
               y.store(transpose<2, 0, 1>(x.load()));
             }).compile(Mesh{{"x", 1}});
  const std::string text = to_text(exe.program().graph);
  EXPECT_NE(text.find("transpose"), std::string::npos) << text;
  const auto got = exe(input_array<float, extents<2, 3, 4>>())[0].to_host<float>(0);
  expect_same(got, host_permute(input_values<float>(24), {2, 3, 4}, {2, 0, 1}), "transpose<2, 0, 1>");
}

/// The host's einshape for the cases below: `split` are the extents of the
/// left side's letters in order, `perm` the result's letters as positions
/// among them; the merges on the right change no element's place.
template <class T>
std::vector<T> host_einshape(std::int64_t n, const std::vector<std::int64_t>& split,
                             const std::vector<std::size_t>& perm) {
  return host_permute(input_values<T>(n), split, perm);
}

template <class Out, class In, class F>
void check_einshape(F f, const std::vector<std::int64_t>& split, const std::vector<std::size_t>& perm,
                    const char* what) {
  auto exe = kernel([&](Ref<const float, In, Vmem> x, Ref<float, Out, Vmem> y) { y.store(f(x.load())); })
                 .compile(Mesh{{"x", 1}});
  const std::int64_t n = static_shape<In>().num_elements();
  const auto got = exe(input_array<float, In>())[0].template to_host<float>(0);
  expect_same(got, host_einshape<float>(n, split, perm), what);
}

TEST(Einshape, TheEquationsOfJaxsParseTest) {
  check_einshape<extents<3, 2>, extents<2, 3>>([](auto x) { return einshape<"ab->ba">(x); }, {2, 3}, {1, 0},
                                               "ab->ba");
  check_einshape<extents<4, 2, 3, 5>, extents<2, 3, 20>>(
      [](auto x) { return einshape<"ab(cd)->cabd", dim<'c', 4>>(x); }, {2, 3, 4, 5}, {2, 0, 1, 3}, "ab(cd)->cabd");
  check_einshape<extents<2, 3, 20>, extents<2, 3, 4, 5>>([](auto x) { return einshape<"abcd->ab(cd)">(x); },
                                                         {2, 3, 4, 5}, {0, 1, 2, 3}, "abcd->ab(cd)");
  check_einshape<extents<10, 3, 4>, extents<10, 12>>([](auto x) { return einshape<"a(bc)->abc", dim<'b', 3>>(x); },
                                                     {10, 3, 4}, {0, 1, 2}, "a(bc)->abc");
  check_einshape<extents<6, 5>, extents<6, 5>>([](auto x) { return einshape<"(ab)c->(ba)c", dim<'a', 2>>(x); },
                                               {2, 3, 5}, {1, 0, 2}, "(ab)c->(ba)c");
  check_einshape<extents<4, 2, 5, 6, 3>, extents<2, 3, 120>>(
      [](auto x) { return einshape<"ab(cde)->cadeb", dim<'c', 4>, dim<'d', 5>>(x); }, {2, 3, 4, 5, 6},
      {2, 0, 3, 4, 1}, "ab(cde)->cadeb");
  // A size the other side implies, and spaces.
  check_einshape<extents<8, 3>, extents<3, 8>>([](auto x) { return einshape<"a b -> b a">(x); }, {3, 8}, {1, 0},
                                               "a b -> b a");
}

TEST(Einshape, AnIdentityTracesNoOpAndAMergeOnlyAReshape) {
  auto same = kernel([](VmemRef<const float, 2, 3, 4> x, VmemRef<float, 2, 3, 4> y) {
                y.store(einshape<"abc->abc">(x.load()));
              }).compile(Mesh{{"x", 1}});
  const std::string same_text = to_text(same.program().graph);
  EXPECT_EQ(same_text.find("reshape"), std::string::npos) << same_text;
  EXPECT_EQ(same_text.find("transpose"), std::string::npos) << same_text;
  auto merge = kernel([](VmemRef<const float, 2, 3, 4> x, VmemRef<float, 6, 4> y) {
                 y.store(einshape<"abc->(ab)c">(x.load() * 2.0f));
               }).compile(Mesh{{"x", 1}});
  const std::string merge_text = to_text(merge.program().graph);
  EXPECT_NE(merge_text.find("reshape"), std::string::npos) << merge_text;
  EXPECT_EQ(merge_text.find("transpose"), std::string::npos) << merge_text;
  // Of a load, the merge is a load of the reshaped view (no reshape runs).
  auto merged_load = kernel([](VmemRef<const float, 2, 3, 4> x, VmemRef<float, 6, 4> y) {
                       y.store(einshape<"abc->(ab)c">(x.load()));
                     }).compile(Mesh{{"x", 1}});
  const std::string load_text = to_text(merged_load.program().graph);
  EXPECT_EQ(load_text.find("reshape"), std::string::npos) << load_text;
  EXPECT_NE(load_text.find("as f32[6,4]"), std::string::npos) << load_text;
  const auto merged = merged_load(input_array<float, extents<2, 3, 4>>())[0].to_host<float>(0);
  expect_same(merged, input_values<float>(24), "abc->(ab)c");
  // "abc->cab" moves (ab) as one: one transpose, no reshape back.
  auto runs = kernel([](VmemRef<const float, 2, 3, 4> x, VmemRef<float, 4, 2, 3> y) {
                y.store(einshape<"abc->cab">(x.load()));
              }).compile(Mesh{{"x", 1}});
  const std::string runs_text = to_text(runs.program().graph);
  EXPECT_NE(runs_text.find("transpose"), std::string::npos) << runs_text;
  const auto got = runs(input_array<float, extents<2, 3, 4>>())[0].to_host<float>(0);
  expect_same(got, host_permute(input_values<float>(24), {2, 3, 4}, {2, 0, 1}), "abc->cab");
}

TEST(Einshape, BlocksOfAFlashAttentionHeadSplit) {
  // (seq, heads * head_dim) -> (heads, seq, head_dim), as a kernel splits
  // heads out of a fused projection, in bf16.
  auto exe = kernel([](VmemRef<const bf16, 16, 4 * 32> x, VmemRef<bf16, 4, 16, 32> y) {
               y.store(einshape<"s(hd)->hsd", dim<'h', 4>>(x.load()));
             }).compile(Mesh{{"x", 1}});
  const auto got = exe(input_array<bf16, extents<16, 128>>())[0].to_host<bf16>(0);
  expect_same(got, host_einshape<bf16>(16 * 128, {16, 4, 32}, {1, 0, 2}), "s(hd)->hsd");
}

}  // namespace
