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
  std::array<bool, 2> varying;          // ... whose value changes per run: scalar points at one per run
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
  std::array<const float*, 2> row;  // a scalar operand that is a row's value: the values, one per run; or null
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
    const float* row = nullptr;
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
    if (f.scalar[j] != nullptr)
      return {StageLeaf::scalar, nullptr, 0, *f.scalar[j], f.varying[j] ? f.scalar[j] : nullptr};
    return {StageLeaf::stream, f.base[j], f.step[j], 0, nullptr};
  }

  void push(StageStepFn fn, Leaf x, Leaf y) {
    StageStep& s = steps_[count_];
    StageOrigin& o = origins_[count_++];
    s.fn = fn;
    s.out = nullptr;
    for (int k = 0; k < stage_width; ++k) s.sx[k] = x.value, s.sy[k] = y.value;  // (0 + -0.0f would be +0)
    o.base = {x.base, y.base};
    o.step = {x.step, y.step};
    o.row = {x.row, y.row};
  }

  // Computes member f into acc, tmp (then f needs one register), or memory.
  void emit(const FusedMember& f, StageDst to) {
    auto op = static_cast<StageOp>(f.stage_op);
    // max(t, c) / min(t, c) with a scalar c that is not NaN: one instruction.
    if (f.taken[1] < 0 && f.scalar[1] != nullptr && !f.varying[1] && !std::isnan(*f.scalar[1])) {
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

/// Points the streams of a program's `count` steps at element `at` of the
/// tile at element b (a stream with step 0 is a tile buffer), and the last
/// step's result at element `at` of `out`.
inline void place_program(StageStep* steps, const StageOrigin* origins, std::size_t count, std::int64_t b, void* out,
                          std::int64_t at = 0) {
  const auto place = [&](const std::byte* base, std::int64_t step) {
    if (base == nullptr) return static_cast<const float*>(nullptr);
    return reinterpret_cast<const float*>(base + (step != 0 ? (b + at) * step : at * std::int64_t{sizeof(float)}));
  };
  for (std::size_t k = 0; k < count; ++k) {
    steps[k].x = place(origins[k].base[0], origins[k].step[0]);
    steps[k].y = place(origins[k].base[1], origins[k].step[1]);
  }
  steps[count - 1].out = static_cast<float*>(out) + at;
}

/// Puts row `r`'s value of each row operand of a program's `count` steps in
/// its register.
inline void place_rows(StageStep* steps, const StageOrigin* origins, std::size_t count, std::int64_t r) {
  for (std::size_t k = 0; k < count; ++k) {
    if (const float* x = origins[k].row[0])
      for (int l = 0; l < stage_width; ++l) steps[k].sx[l] = x[r];
    if (const float* y = origins[k].row[1])
      for (int l = 0; l < stage_width; ++l) steps[k].sy[l] = y[r];
  }
}

}  // namespace REFX_STAGE_NAMESPACE
}  // namespace refx::detail
