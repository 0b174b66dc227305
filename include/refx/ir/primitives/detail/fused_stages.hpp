#pragma once
// Compiled stage programs of a fused loop (ir/primitives/fused.hpp). Run one
// op at a time, a fused group stores every intermediate tile and loads it
// again; a stage program instead runs a whole expression tree of f32 members
// (add, sub, mul, max, min: the stage alphabet) as one pass over the
// elements, 16 at a time (32 with AVX, 64 with AVX-512), with every
// intermediate in vector registers.
//
// A program is a list of steps, each a small compiled function that does one
// member's op on 16 elements and jumps to the next step, passing two register
// sets along as arguments (in xmm registers on x86-64, v registers on
// AArch64): `acc`, the value being built, and `tmp`, the second operand of a
// member whose operands are both computed in the program. A step's operands
// are registers, streams (arrays, loaded Refs, tiles of other members: 16
// consecutive elements from a pointer) or scalars (a constant in every lane,
// held in the step). The last step stores its result. Any tree of the alphabet
// that needs at most two registers runs as one program (the planner,
// fused_plan.hpp, spills a subtree to its tile where a tree needs more):
// `max(x*2 + y*3, 0)` is five steps, a*x+b*y, scale-and-bias, clamps and
// activations likewise. The steps compose at run time, so the number of
// compiled functions grows with ops x operand forms (about a hundred), not
// with the shapes of the trees.
//
// Each element sees the same functors in the same order as unfused, operands
// in the same positions, and every intermediate is an f32 as the tile would
// hold it: results are bit-identical to the unfused graph. The steps are
// compiled without FMA contraction (a contracted x * a + b would round once
// where the unfused graph rounds twice).

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#if defined(__SSE__)
#include <immintrin.h>
#endif

#if defined(__GNUC__) && !defined(__clang__)
#define REFX_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define REFX_NO_FP_CONTRACT
#endif

#if defined(__AVX512F__)
#define REFX_STAGE_NAMESPACE stage_avx512
#elif defined(__AVX__)
#define REFX_STAGE_NAMESPACE stage_avx
#else
#define REFX_STAGE_NAMESPACE stage_sse
#endif

namespace refx::detail {
// What depends on the vector width is in a namespace named after it:
// translation units compiled for different targets (a program's own files
// with -march=native beside librefx) do not share these definitions.
inline namespace REFX_STAGE_NAMESPACE {

#if !defined(__GNUC__) && !defined(__clang__)
#error "refx: fused stage programs need GCC or Clang vector extensions"
#endif
// A stage vector: as wide as the target's widest vectors. With AVX-512 a
// pass is 64 elements, half the step calls per element of 256-bit vectors
// (the step calls, not the arithmetic, bound a short program: measured
// 1.32-1.36x a hand loop against 1.46-1.54x for max(x*2 + y*3, 0)); the 8
// vector arguments of a step still travel in registers (zmm0-7).
#if defined(__AVX512F__)
inline constexpr int stage_vector_bytes = 64;
#elif defined(__AVX__)
inline constexpr int stage_vector_bytes = 32;
#else
inline constexpr int stage_vector_bytes = 16;
#endif
using StageVec = float __attribute__((vector_size(stage_vector_bytes)));
using StageMask = std::int32_t __attribute__((vector_size(stage_vector_bytes)));
/// Elements per vector, and per pass through a stage program (four vectors).
inline constexpr std::int64_t stage_width = stage_vector_bytes / 4;
inline constexpr std::int64_t stage_lanes = 4 * stage_width;
/// At most this many steps in one program (one per member).
inline constexpr std::size_t stage_max_steps = 64;

inline StageVec stage_select(StageMask m, StageVec yes, StageVec no) {
  return reinterpret_cast<StageVec>((reinterpret_cast<StageMask>(yes) & m) | (reinterpret_cast<StageMask>(no) & ~m));
}

// The alphabet's functors on a vector, each lane exactly the scalar functor
// of elementwise_fns.hpp (Max / Min: a NaN `b` wins, then `a < b ? b : a`).
// MaxNum / MinNum are Max / Min where `b` is known not to be NaN (a scalar
// operand on the right: max(x, 0), a clamp's bounds): one instruction on x86.
// clang-format off
// Where both operands are NaN, x86 returns the first source operand's. The
// one-op-at-a-time kernels compute a + b with `a` first (a scalar or a
// vector loaded from memory into the destination, `b` the memory operand);
// a compiler is free to swap the operands of a commutative vector add or
// multiply, so on x86 these two are pinned in that order.
#if defined(__AVX__)
// ("v": any vector register the target has; zmm with AVX-512, ymm with AVX.)
struct StageAdd { StageVec operator()(StageVec a, StageVec b) const { StageVec r; __asm__("vaddps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b)); return r; } };
struct StageMul { StageVec operator()(StageVec a, StageVec b) const { StageVec r; __asm__("vmulps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b)); return r; } };
#elif defined(__SSE__)
struct StageAdd { StageVec operator()(StageVec a, StageVec b) const { __asm__("addps %1, %0" : "+x"(a) : "x"(b)); return a; } };
struct StageMul { StageVec operator()(StageVec a, StageVec b) const { __asm__("mulps %1, %0" : "+x"(a) : "x"(b)); return a; } };
#else
struct StageAdd { StageVec operator()(StageVec a, StageVec b) const { return a + b; } };
struct StageMul { StageVec operator()(StageVec a, StageVec b) const { return a * b; } };
#endif
struct StageSub { StageVec operator()(StageVec a, StageVec b) const { return a - b; } };
// x86's max(b, a) is b > a ? b : a (a when unordered); min(b, a) is b < a ? b : a.
#if defined(__AVX512F__)
// (The masked forms, all lanes on: GCC 12 reports the plain ones' undefined
// pass-through operand as maybe-uninitialized, bug 105593.)
struct StageMaxNum { StageVec operator()(StageVec a, StageVec b) const { const auto x = reinterpret_cast<__m512>(a); return reinterpret_cast<StageVec>(_mm512_mask_max_ps(x, 0xffff, reinterpret_cast<__m512>(b), x)); } };
struct StageMinNum { StageVec operator()(StageVec a, StageVec b) const { const auto x = reinterpret_cast<__m512>(a); return reinterpret_cast<StageVec>(_mm512_mask_min_ps(x, 0xffff, reinterpret_cast<__m512>(b), x)); } };
#elif defined(__AVX__)
struct StageMaxNum { StageVec operator()(StageVec a, StageVec b) const { return reinterpret_cast<StageVec>(_mm256_max_ps(reinterpret_cast<__m256>(b), reinterpret_cast<__m256>(a))); } };
struct StageMinNum { StageVec operator()(StageVec a, StageVec b) const { return reinterpret_cast<StageVec>(_mm256_min_ps(reinterpret_cast<__m256>(b), reinterpret_cast<__m256>(a))); } };
#elif defined(__SSE__)
struct StageMaxNum { StageVec operator()(StageVec a, StageVec b) const { return reinterpret_cast<StageVec>(_mm_max_ps(reinterpret_cast<__m128>(b), reinterpret_cast<__m128>(a))); } };
struct StageMinNum { StageVec operator()(StageVec a, StageVec b) const { return reinterpret_cast<StageVec>(_mm_min_ps(reinterpret_cast<__m128>(b), reinterpret_cast<__m128>(a))); } };
#else
struct StageMaxNum { StageVec operator()(StageVec a, StageVec b) const { return stage_select(a < b, b, a); } };
struct StageMinNum { StageVec operator()(StageVec a, StageVec b) const { return stage_select(b < a, b, a); } };
#endif
struct StageMax { StageVec operator()(StageVec a, StageVec b) const { return stage_select(b != b, b, StageMaxNum{}(a, b)); } };
struct StageMin { StageVec operator()(StageVec a, StageVec b) const { return stage_select(b != b, b, StageMinNum{}(a, b)); } };
// clang-format on

/// The ops of stage steps, in the order of stage_op_index (fused.hpp), then
/// the two forms for a right operand that is not NaN.
enum class StageOp : std::uint8_t { add, sub, mul, max, min, max_num, min_num };
inline constexpr std::size_t stage_op_count = 7;

/// How a step finds its two operands.
///   leaves      op(x, y)
///   reg_left    op(r, x)        reg_right   op(x, r)      (r: the register written)
///   acc_left    op(acc, tmp)    acc_right   op(tmp, acc)
enum class StageForm : std::uint8_t { leaves, reg_left, reg_right, acc_left, acc_right };
inline constexpr std::size_t stage_forms = 5;
/// Where a step's result goes: acc, tmp, or (the last step) memory.
enum class StageDst : std::uint8_t { acc, tmp, out };
/// A leaf operand: consecutive elements of a stream, or a scalar.
enum class StageLeaf : std::uint8_t { stream, scalar };

struct StageStep;
#define REFX_STAGE_REGS \
  StageVec a0, StageVec a1, StageVec a2, StageVec a3, StageVec t0, StageVec t1, StageVec t2, StageVec t3
/// One step, on elements [i, i + stage_lanes) of the pass; a0..a3 is acc, t0..t3 tmp.
using StageStepFn = void (*)(const StageStep* s, std::int64_t i, REFX_STAGE_REGS);

/// A step of a program: its function and operands. The program runs from
/// its first step; each step calls the next (s + 1) but the last, which
/// stores its result and returns.
struct StageStep {
  StageStepFn fn;
  const float* x;  // stream operands (element i of the pass at x + i)
  const float* y;
  float* out;       // the last step's destination
  StageVec sx, sy;  // scalar operands, in every lane
};

template <StageLeaf K>
inline StageVec stage_leaf(const float* p, StageVec s, std::int64_t i) {
  if constexpr (K == StageLeaf::stream) {
    StageVec v;
    std::memcpy(&v, p + i, sizeof v);
    return v;
  } else {
    return s;
  }
}

/// Stores a pass's four result vectors at o.
inline void stage_store(float* o, StageVec r0, StageVec r1, StageVec r2, StageVec r3) {
  constexpr std::int64_t w = stage_width;
  std::memcpy(o, &r0, sizeof r0);
  std::memcpy(o + w, &r1, sizeof r1);
  std::memcpy(o + 2 * w, &r2, sizeof r2);
  std::memcpy(o + 3 * w, &r3, sizeof r3);
}

template <StageOp O>
inline StageVec stage_apply(StageVec a, StageVec b) {
  if constexpr (O == StageOp::add) return StageAdd{}(a, b);
  else if constexpr (O == StageOp::sub) return StageSub{}(a, b);
  else if constexpr (O == StageOp::mul) return StageMul{}(a, b);
  else if constexpr (O == StageOp::max) return StageMax{}(a, b);
  else if constexpr (O == StageOp::min) return StageMin{}(a, b);
  else if constexpr (O == StageOp::max_num) return StageMaxNum{}(a, b);
  else return StageMinNum{}(a, b);
}

/// Step `O` in form `F` with leaves of kinds X, Y, its result going to D.
template <StageOp O, StageForm F, StageDst D, StageLeaf X, StageLeaf Y>
REFX_NO_FP_CONTRACT void stage_step(const StageStep* s, std::int64_t i, REFX_STAGE_REGS) {
  const auto x = [&](std::int64_t k) { return stage_leaf<X>(s->x, s->sx, i + k); };
  const auto y = [&](std::int64_t k) { return stage_leaf<Y>(s->y, s->sy, i + k); };
  constexpr std::int64_t w = stage_width;
  StageVec r0, r1, r2, r3;
  if constexpr (F == StageForm::leaves) {
    r0 = stage_apply<O>(x(0), y(0)), r1 = stage_apply<O>(x(w), y(w));
    r2 = stage_apply<O>(x(2 * w), y(2 * w)), r3 = stage_apply<O>(x(3 * w), y(3 * w));
  } else if constexpr (F == StageForm::reg_left || F == StageForm::reg_right) {
    constexpr bool left = F == StageForm::reg_left, tmp = D == StageDst::tmp;
    const StageVec d0 = tmp ? t0 : a0, d1 = tmp ? t1 : a1, d2 = tmp ? t2 : a2, d3 = tmp ? t3 : a3;
    r0 = left ? stage_apply<O>(d0, x(0)) : stage_apply<O>(x(0), d0);
    r1 = left ? stage_apply<O>(d1, x(w)) : stage_apply<O>(x(w), d1);
    r2 = left ? stage_apply<O>(d2, x(2 * w)) : stage_apply<O>(x(2 * w), d2);
    r3 = left ? stage_apply<O>(d3, x(3 * w)) : stage_apply<O>(x(3 * w), d3);
  } else if constexpr (F == StageForm::acc_left) {
    r0 = stage_apply<O>(a0, t0), r1 = stage_apply<O>(a1, t1), r2 = stage_apply<O>(a2, t2), r3 = stage_apply<O>(a3, t3);
  } else {
    r0 = stage_apply<O>(t0, a0), r1 = stage_apply<O>(t1, a1), r2 = stage_apply<O>(t2, a2), r3 = stage_apply<O>(t3, a3);
  }
  if constexpr (D == StageDst::out) {
    stage_store(s->out + i, r0, r1, r2, r3);
  } else if constexpr (D == StageDst::tmp) {
    return s[1].fn(s + 1, i, a0, a1, a2, a3, r0, r1, r2, r3);
  } else {
    return s[1].fn(s + 1, i, r0, r1, r2, r3, t0, t1, t2, t3);
  }
}

// The table of steps: index ((((op * 5 + form) * 3 + dst) * 2 + x) * 2 + y);
// leaf kinds a form does not read are `stream`, acc_* forms never write tmp.
inline constexpr std::size_t stage_step_count = stage_op_count * stage_forms * 12;

template <std::size_t I>
constexpr StageStepFn stage_step_at() {
  constexpr auto y = static_cast<StageLeaf>(I % 2), x = static_cast<StageLeaf>(I / 2 % 2);
  constexpr auto dst = static_cast<StageDst>(I / 4 % 3);
  constexpr auto form = static_cast<StageForm>(I / 12 % stage_forms);
  constexpr auto op = static_cast<StageOp>(I / 12 / stage_forms);
  constexpr bool acc_tmp = form == StageForm::acc_left || form == StageForm::acc_right;
  constexpr bool used = (form == StageForm::leaves || y == StageLeaf::stream) &&
                        (!acc_tmp || (dst != StageDst::tmp && x == StageLeaf::stream));
  if constexpr (used) return &stage_step<op, form, dst, x, y>;
  else return nullptr;
}
template <std::size_t... I>
constexpr std::array<StageStepFn, sizeof...(I)> stage_steps(std::index_sequence<I...>) {
  return {stage_step_at<I>()...};
}

/// The step of op `o` in form `f` with leaves x and y (where the form reads them), writing to `d`.
inline StageStepFn stage_step_fn(StageOp o, StageForm f, StageDst d, StageLeaf x = StageLeaf::stream,
                                 StageLeaf y = StageLeaf::stream) {
  static constexpr auto table = stage_steps(std::make_index_sequence<stage_step_count>{});
  if (f != StageForm::leaves) y = StageLeaf::stream;
  if (f == StageForm::acc_left || f == StageForm::acc_right) x = StageLeaf::stream;
  const std::size_t at =
      (((static_cast<std::size_t>(o) * stage_forms + static_cast<std::size_t>(f)) * 3 + static_cast<std::size_t>(d)) *
           2 +
       static_cast<std::size_t>(x)) *
          2 +
      static_cast<std::size_t>(y);
  return table[at];
}

/// Runs a program over elements [0, n) (n a multiple of stage_lanes): its
/// first step (always `leaves`, writing acc or, alone, the output) with the
/// loop around it, calling the next step for each pass.
using StageRunFn = void (*)(const StageStep* s, std::int64_t n);

template <StageOp O, StageDst D, StageLeaf X, StageLeaf Y>
REFX_NO_FP_CONTRACT void stage_run(const StageStep* s, std::int64_t n) {
  constexpr std::int64_t w = stage_width;
  for (std::int64_t i = 0; i < n; i += stage_lanes) {
    const auto x = [&](std::int64_t k) { return stage_leaf<X>(s->x, s->sx, i + k); };
    const auto y = [&](std::int64_t k) { return stage_leaf<Y>(s->y, s->sy, i + k); };
    const StageVec r0 = stage_apply<O>(x(0), y(0)), r1 = stage_apply<O>(x(w), y(w));
    const StageVec r2 = stage_apply<O>(x(2 * w), y(2 * w)), r3 = stage_apply<O>(x(3 * w), y(3 * w));
    if constexpr (D == StageDst::out) {
      stage_store(s->out + i, r0, r1, r2, r3);
    } else {
      s[1].fn(s + 1, i, r0, r1, r2, r3, r0, r1, r2, r3);  // tmp is not read before it is written
    }
  }
}
template <std::size_t I>
constexpr StageRunFn stage_run_at() {
  // I = ((op * 2 + to_out) * 2 + x) * 2 + y
  return &stage_run < static_cast<StageOp>(I / 8), I / 4 % 2 == 1 ? StageDst::out : StageDst::acc,
         static_cast<StageLeaf>(I / 2 % 2), static_cast<StageLeaf>(I % 2) > ;
}
template <std::size_t... I>
constexpr std::array<StageRunFn, sizeof...(I)> stage_runs(std::index_sequence<I...>) {
  return {stage_run_at<I>()...};
}
/// The loop around a first step: op `o` on leaves x and y, writing acc or (d == out) the output.
inline StageRunFn stage_run_fn(StageOp o, StageDst d, StageLeaf x, StageLeaf y) {
  static constexpr auto table = stage_runs(std::make_index_sequence<stage_op_count * 8>{});
  return table[((static_cast<std::size_t>(o) * 2 + (d == StageDst::out ? 1 : 0)) * 2 + static_cast<std::size_t>(x)) *
                   2 +
               static_cast<std::size_t>(y)];
}

/// Runs the program `run`, `steps` (`count` steps) over elements [0, n) of
/// its operands: stage_lanes at a time, and a shorter tail through a copy of
/// the program whose streams point at padded copies.
inline void run_stage_program(StageRunFn run, const StageStep* steps, std::size_t count, std::int64_t n) {
  const std::int64_t i = n / stage_lanes * stage_lanes;
  if (i > 0) run(steps, i);
  if (i == n) return;
  const std::int64_t rest = n - i;
  StageStep tail[stage_max_steps];
  alignas(stage_vector_bytes) float lanes[stage_max_steps][2][stage_lanes];
  alignas(stage_vector_bytes) float out[stage_lanes];
  const auto copy_in = [&](const float* p, float* to) {
    if (p == nullptr) return p;
    std::memcpy(to, p + i, static_cast<std::size_t>(rest) * sizeof(float));
    std::memset(to + rest, 0, static_cast<std::size_t>(stage_lanes - rest) * sizeof(float));
    return static_cast<const float*>(to);
  };
  for (std::size_t k = 0; k < count && k < stage_max_steps; ++k) {
    tail[k] = steps[k];
    tail[k].x = copy_in(steps[k].x, lanes[k][0]);
    tail[k].y = copy_in(steps[k].y, lanes[k][1]);
  }
  tail[count - 1].out = out;
  run(tail, stage_lanes);
  std::memcpy(steps[count - 1].out + i, out, static_cast<std::size_t>(rest) * sizeof(float));
}

}  // namespace REFX_STAGE_NAMESPACE
}  // namespace refx::detail
#undef REFX_STAGE_REGS
