#pragma once
// What the two random program generators share: the single-device one of
// tests/passes/differential_test.cpp and the SPMD one it grew into,
// tests/reliability/spmd_programs.hpp. Both trace a kernel body whose choices
// come from a seeded std::mt19937 while it is traced; this base holds the
// draws, the REGULAR signal / wait pairs each block balances, the nested
// blocks (fori_loop, when) with the innermost loop index, the waits of the
// copies a block started, and the elementwise op tree of an expression.
//
// A generator derives from ProgramGenerator<Self> (CRTP), names it a friend,
// and provides statement(frame) and drain(frame): `frame` says which block
// started a copy, so that every block waits what it started before it ends.
// The draws happen in the order the two generators made them before this
// base existed, so a seed still traces the same program.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include <refx/refx.hpp>

namespace refx::testing {

template <class Self>
class ProgramGenerator {
 protected:
  ProgramGenerator(std::uint32_t seed, RegularSemaphores<2> reg) : rng_(seed), reg_(reg) {}

  int between(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin(int percent) { return between(0, 99) < percent; }

  /// Signals one of the two REGULAR semaphores; the block waits for it before it ends.
  void signal() {
    const int k = between(0, 1), inc = between(1, 3);
    semaphore_signal(reg_.at(k), inc);
    pending_[static_cast<std::size_t>(depth_)][static_cast<std::size_t>(k)] += inc;
  }
  /// Waits for some (or, with `all`, every) signal of this block not yet waited.
  void wait_signals(bool all) {
    auto& p = pending_[static_cast<std::size_t>(depth_)];
    for (int k = 0; k < 2; ++k) {
      const int have = p[static_cast<std::size_t>(k)];
      if (have == 0) continue;
      const int v = all ? have : between(1, have);
      semaphore_wait(reg_.at(k), v);
      p[static_cast<std::size_t>(k)] -= v;
    }
  }

  /// A nested block (the body of a fori_loop or a `when`): one to five
  /// statements of block `frame`, then everything they started is waited.
  void block(int frame) {
    ++depth_;
    pending_[static_cast<std::size_t>(depth_)] = {0, 0};
    const int n = between(1, 5);
    for (int k = 0; k < n; ++k) self().statement(frame);
    self().drain(frame);
    --depth_;
  }

  /// fori_loop(lo, hi) of `body`, with loop_ its index (loop_hi_ its bound)
  /// while the body is traced, and the enclosing loop's index again after it.
  template <class Body>
  void in_loop(int lo, int hi, Body&& body) {
    auto saved = loop_;
    const int saved_hi = loop_hi_;
    fori_loop(lo, hi, [&](Scalar<std::int32_t> i) {
      loop_ = i;
      loop_hi_ = hi;
      body();
    });
    loop_ = saved;
    loop_hi_ = saved_hi;
  }

  /// Waits the oldest of `flights` (copies in flight) that block `frame` started, if any.
  template <class Flight, class Wait>
  static void wait_oldest(std::vector<Flight>& flights, int frame, Wait&& wait) {
    for (std::size_t k = 0; k < flights.size(); ++k)
      if (flights[k].frame == frame) {
        wait(k);
        return;
      }
  }
  /// Waits every one of `flights` that block `frame` started, newest first
  /// (`wait(k)` may erase flights[k]).
  template <class Flight, class Wait>
  static void wait_all(std::vector<Flight>& flights, int frame, Wait&& wait) {
    for (std::size_t k = flights.size(); k-- > 0;)
      if (flights[k].frame == frame) wait(k);
  }

  /// One of nine elementwise ops over `a`: with operands from `operand()`
  /// (each call draws a new subexpression), unary ones, or `affine(a)`.
  template <class V, class Operand, class Affine>
  V combine(const V& a, Operand&& operand, Affine&& affine) {
    switch (between(0, 8)) {
      case 0: return a + operand();
      case 1: return a - operand();
      case 2: return a * operand();
      case 3: return max(a, operand());
      case 4: return min(a, operand());
      case 5: return -a;
      case 6: return abs(a);
      case 7: return select(a > operand(), a, operand());
      default: return affine(a);
    }
  }

  std::mt19937 rng_;
  RegularSemaphores<2> reg_;
  std::array<std::array<int, 2>, 4> pending_{};  ///< signals not yet waited, per block depth
  std::optional<Scalar<std::int32_t>> loop_;     ///< the innermost fori_loop's index
  int loop_hi_ = 0, depth_ = 0, frames_ = 0;

 private:
  Self& self() { return static_cast<Self&>(*this); }
};

}  // namespace refx::testing
