#pragma once
// The members of a fused loop (ir/primitives/fused.hpp) as the loop runs
// them, and the plan that turns its f32 add / sub / mul / max / min members
// into stage programs (fused_stages.hpp).
//
// A member of the stage alphabet takes in each operand made by another
// member of the alphabet that nothing else reads: that one is computed in
// registers inside the program of its user instead of into a tile of its
// own. The members left (the roots) each run one program, at their place in
// the loop, which stores the root's result into its tile (or the loop's
// output). A program has two register sets, so a tree whose two operands
// both need two registers (Strahler number 3: (a*b + c*d) * (e*f + g*h))
// keeps its right operand as a root of its own, computed into its tile
// first. Every taken-in member's operands (tiles of earlier members, inputs,
// loads) are unchanged between its own place and its user's: elementwise
// members read tiles that only their producers write.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>

#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/detail/fused_stages.hpp>

namespace refx::detail {
inline namespace REFX_STAGE_NAMESPACE {

/// A binary member with one scalar operand, computed from the scalar itself
/// rather than from its broadcast tile (one stream less to read).
using ScalarFn = void (*)(const void* array, const void* scalar, void* out, std::int64_t n);

/// A member of a fused loop. Each input j is at base[j] + b * step[j] for the
/// tile at element b (step 0: a tile buffer or a scalar, the same for every tile).
struct FusedMember {
  ElementwiseFn fn;
  ScalarFn sfn;  // non-null: the input at scalar_at is a scalar, passed as such
  DType in;
  std::int64_t inputs, slot, scalar_at;
  std::array<const std::byte*, 8> base;
  std::array<std::int64_t, 8> step;
  std::array<const float*, 2> scalar;   // input 0 / 1 as an f32 scalar (a register in a program), or null
  std::array<std::int8_t, 2> producer;  // the member that makes input 0 / 1, or -1
  std::array<std::int8_t, 2> taken;     // ... when it is computed inside this member's program, or -1
  std::int8_t stage_op;                 // stage_op_index (fused.hpp), or -1
  std::int8_t need;                     // registers its program (sub)tree needs: 1 or 2
  std::int32_t uses;                    // how many member inputs read this member
  bool inlined;                         // computed inside its one user's program
  std::int32_t program;                 // a root: its program's first step, or -1
  std::int32_t program_steps;
  StageRunFn run;  // ... and the loop that runs it
};

/// Where a step's stream operands are for the tile at element b: base + b * step.
struct StageOrigin {
  std::array<const std::byte*, 2> base;
  std::array<std::int64_t, 2> step;
};

class StagePlanner {
 public:
  StagePlanner(std::span<FusedMember> m, std::span<StageStep> steps, std::span<StageOrigin> origins)
      : m_(m), steps_(steps), origins_(origins) {}

  /// Decides what each member takes in and writes the programs of the roots;
  /// returns the number of steps written.
  std::size_t plan() {
    for (FusedMember& f : m_) take_operands(f);
    for (FusedMember& f : m_) {
      f.program = -1;
      if (f.stage_op < 0 || f.inlined) continue;
      const std::size_t first = count_;
      run_ = nullptr;
      emit(f, StageDst::out);
      f.run = run_;
      f.program = static_cast<std::int32_t>(first);
      f.program_steps = static_cast<std::int32_t>(count_ - first);
    }
    return count_;
  }

 private:
  struct Leaf {
    StageLeaf kind = StageLeaf::stream;
    const std::byte* base = nullptr;
    std::int64_t step = 0;
    float value = 0;
  };

  void take_operands(FusedMember& f) {
    f.taken = {-1, -1};
    f.need = 0;
    if (f.stage_op < 0) return;
    std::array<int, 2> need{0, 0};
    for (std::size_t j = 0; j < 2; ++j) {
      const int p = f.producer[j];
      if (p < 0) continue;
      const FusedMember& q = m_[static_cast<std::size_t>(p)];
      if (q.stage_op < 0 || q.uses != 1) continue;
      f.taken[j] = static_cast<std::int8_t>(p);
      need[j] = q.need;
    }
    if (need[0] == 2 && need[1] == 2) {  // three registers: the right operand stays a root
      f.taken[1] = -1;
      need[1] = 0;
    }
    f.need = static_cast<std::int8_t>(std::max(1, need[0] == need[1] ? need[0] + 1 : std::max(need[0], need[1])));
    for (const int p : f.taken)
      if (p >= 0) m_[static_cast<std::size_t>(p)].inlined = true;
  }

  Leaf leaf(const FusedMember& f, std::size_t j) const {
    if (f.scalar[j] != nullptr) return {StageLeaf::scalar, nullptr, 0, *f.scalar[j]};
    return {StageLeaf::stream, f.base[j], f.step[j], 0};
  }

  void push(StageStepFn fn, Leaf x, Leaf y) {
    StageStep& s = steps_[count_];
    StageOrigin& o = origins_[count_++];
    s.fn = fn;
    s.out = nullptr;
    for (int k = 0; k < stage_width; ++k) s.sx[k] = x.value, s.sy[k] = y.value;  // (0 + -0.0f would be +0)
    o.base = {x.base, y.base};
    o.step = {x.step, y.step};
  }

  // Computes member f into acc, tmp (then f needs one register), or memory.
  void emit(const FusedMember& f, StageDst to) {
    auto op = static_cast<StageOp>(f.stage_op);
    // max(t, c) / min(t, c) with a scalar c that is not NaN: one instruction.
    if (f.taken[1] < 0 && f.scalar[1] != nullptr && !std::isnan(*f.scalar[1])) {
      if (op == StageOp::max) op = StageOp::max_num;
      if (op == StageOp::min) op = StageOp::min_num;
    }
    const int c0 = f.taken[0], c1 = f.taken[1];
    if (c0 < 0 && c1 < 0) {
      const Leaf x = leaf(f, 0), y = leaf(f, 1);
      if (run_ == nullptr) run_ = stage_run_fn(op, to, x.kind, y.kind);  // to: acc, or out when alone
      push(stage_step_fn(op, StageForm::leaves, to, x.kind, y.kind), x, y);
    } else if (c1 < 0 || c0 < 0) {
      const std::size_t j = c0 >= 0 ? 0 : 1;
      emit(m_[static_cast<std::size_t>(f.taken[j])], to == StageDst::tmp ? StageDst::tmp : StageDst::acc);
      const Leaf x = leaf(f, 1 - j);
      push(stage_step_fn(op, j == 0 ? StageForm::reg_left : StageForm::reg_right, to, x.kind), x, {});
    } else {
      const FusedMember &l = m_[static_cast<std::size_t>(c0)], &r = m_[static_cast<std::size_t>(c1)];
      const bool left_first = l.need >= r.need;  // the operand needing two registers goes to acc
      emit(left_first ? l : r, StageDst::acc);
      emit(left_first ? r : l, StageDst::tmp);
      push(stage_step_fn(op, left_first ? StageForm::acc_left : StageForm::acc_right, to), {}, {});
    }
  }

  std::span<FusedMember> m_;
  std::span<StageStep> steps_;
  std::span<StageOrigin> origins_;
  std::size_t count_ = 0;
  StageRunFn run_ = nullptr;  // the loop around the current program's first step
};

/// Plans the stage programs of a fused loop (members' producers and uses
/// set); returns the number of steps written to `steps` and `origins`
/// (one per member taken into a program).
inline std::size_t plan_programs(std::span<FusedMember> m, std::span<StageStep> steps, std::span<StageOrigin> origins) {
  return StagePlanner(m, steps, origins).plan();
}

/// Points the streams of a program's `count` steps at the tile at element b,
/// and the last step's result at `out`.
inline void place_program(StageStep* steps, const StageOrigin* origins, std::size_t count, std::int64_t b, void* out) {
  for (std::size_t k = 0; k < count; ++k) {
    const StageOrigin& o = origins[k];
    steps[k].x = o.base[0] != nullptr ? reinterpret_cast<const float*>(o.base[0] + b * o.step[0]) : nullptr;
    steps[k].y = o.base[1] != nullptr ? reinterpret_cast<const float*>(o.base[1] + b * o.step[1]) : nullptr;
  }
  steps[count - 1].out = static_cast<float*>(out);
}

}  // namespace REFX_STAGE_NAMESPACE
}  // namespace refx::detail
