#pragma once
// Compiled stages of a fused loop (ir/primitives/fused.hpp). Run one op at a
// time, a fused group stores every intermediate tile and loads it again; a
// stage instead runs two or three f32 members as one vectorised loop, with
// the intermediates in registers:
//   chain   r = O2(O1(a, b), c), or O2(c, O1(a, b))
//   tree    r = O3(O1(a, b), O2(c, d))
// for O1, O2, O3 among add, sub, mul, max and min (the stage alphabet). Each
// element sees the same functors (elementwise_fns.hpp) in the same order,
// operands in the same positions, and every intermediate is an f32 as the
// tile would hold it: results are bit-identical to the unfused graph. The
// kernels are compiled without FMA contraction (a contracted x * a + b would
// round once where the unfused graph rounds twice).

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>

#include <refx/ir/primitives/detail/elementwise_fns.hpp>

#if defined(__GNUC__) && !defined(__clang__)
#define REFX_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define REFX_NO_FP_CONTRACT
#endif

namespace refx::detail {

/// A compiled stage over n f32 elements; `in` holds its operand arrays.
using StageFn = void (*)(const void* const* in, void* out, std::int64_t n);

/// The stage alphabet, in the order of stage_op_index.
using StageOps = std::tuple<Add, Sub, Mul, Max, Min>;
inline constexpr std::size_t stage_ops = std::tuple_size_v<StageOps>;

template <class O1, class O2, bool InnerRight>
REFX_NO_FP_CONTRACT void chain_stage(const void* const* in, void* out, std::int64_t n) {
  const auto* a = static_cast<const float*>(in[0]);
  const auto* b = static_cast<const float*>(in[1]);
  const auto* c = static_cast<const float*>(in[2]);
  auto* o = static_cast<float*>(out);
  for (std::int64_t i = 0; i < n; ++i) {
    const float t = O1{}(a[i], b[i]);
    o[i] = InnerRight ? O2{}(c[i], t) : O2{}(t, c[i]);
  }
}

template <class O1, class O2, class O3>
REFX_NO_FP_CONTRACT void tree_stage(const void* const* in, void* out, std::int64_t n) {
  const auto* a = static_cast<const float*>(in[0]);
  const auto* b = static_cast<const float*>(in[1]);
  const auto* c = static_cast<const float*>(in[2]);
  const auto* d = static_cast<const float*>(in[3]);
  auto* o = static_cast<float*>(out);
  for (std::int64_t i = 0; i < n; ++i) {
    const float l = O1{}(a[i], b[i]);
    const float r = O2{}(c[i], d[i]);
    o[i] = O3{}(l, r);
  }
}

template <std::size_t I>
using stage_op_t = std::tuple_element_t<I, StageOps>;

template <std::size_t... I>
constexpr std::array<StageFn, sizeof...(I)> chain_stages(std::index_sequence<I...>) {
  // I = (o1 * stage_ops + o2) * 2 + inner_right
  return {&chain_stage<stage_op_t<I / 2 / stage_ops>, stage_op_t<I / 2 % stage_ops>, I % 2 == 1>...};
}
template <std::size_t... I>
constexpr std::array<StageFn, sizeof...(I)> tree_stages(std::index_sequence<I...>) {
  // I = (o1 * stage_ops + o2) * stage_ops + o3
  return {&tree_stage<stage_op_t<I / stage_ops / stage_ops>, stage_op_t<I / stage_ops % stage_ops>,
                      stage_op_t<I % stage_ops>>...};
}

/// The chain stage O2(O1(a, b), c) (inner_right: O2(c, O1(a, b))), by stage op index.
inline StageFn chain_stage_fn(int o1, int o2, bool inner_right) {
  static constexpr auto table = chain_stages(std::make_index_sequence<stage_ops * stage_ops * 2>{});
  return table[static_cast<std::size_t>((o1 * static_cast<int>(stage_ops) + o2) * 2 + (inner_right ? 1 : 0))];
}
/// The tree stage O3(O1(a, b), O2(c, d)), by stage op index.
inline StageFn tree_stage_fn(int o1, int o2, int o3) {
  static constexpr auto table = tree_stages(std::make_index_sequence<stage_ops * stage_ops * stage_ops>{});
  const int k = static_cast<int>(stage_ops);
  return table[static_cast<std::size_t>((o1 * k + o2) * k + o3)];
}

}  // namespace refx::detail
