#pragma once
// The host-effect sequencer of one launch (docs/effects.md): the ordered
// effects (debug_print, io_callback) of a multi-device program, buffered per
// device and kind and performed in (sequence, device) order -- the device's
// n-th ordered effect of a kind, then the device id -- by whichever worker
// completes a prefix of that order. Devices never wait for each other's turn;
// one emitter at a time performs what is due, others leave it the work. The
// launch's lock guards it; it is unlocked while an effect runs.

#include <array>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include <refx/ir/eval.hpp>
#include <refx/ir/host_effects.hpp>

namespace refx::detail {

class EffectSequencer {
 public:
  /// Ordered effects of one kind, buffered until their turn.
  struct Pending {
    std::int64_t seq = 0;
    std::int32_t device = 0;
    const Op* op = nullptr;
    std::unique_ptr<HostEffect> effect;
  };

  /// Sequences a program of `devices` devices (only needed for more than one:
  /// a single device's program order is the order).
  void start(std::int32_t devices) {
    chains_ = std::make_unique<std::array<Chain, num_ordered_effects>>();
    for (Chain& c : *chains_) {
      c.queues.resize(static_cast<std::size_t>(devices));
      c.reached.assign(static_cast<std::size_t>(devices), 0);
    }
  }
  bool active() const noexcept { return chains_ != nullptr; }
  bool emitting() const noexcept { return emitting_; }

  /// Device d reached the ordered effect `e` at `op`; it waits for its turn
  /// (dropped if an earlier effect of its kind failed). The lock is held.
  void buffer_locked(std::int32_t d, const Op& op, std::unique_ptr<HostEffect> e) {
    Chain& c = (*chains_)[e->token - 1u];
    const std::int64_t seq = c.reached[static_cast<std::size_t>(d)]++;
    if (c.broken) return;
    c.queues[static_cast<std::size_t>(d)].push_back(Pending{seq, d, &op, std::move(e)});
    ++c.buffered;
  }

  /// Performs every buffered effect whose turn has come, unlocking `lock`
  /// around each `perform(Pending&)` (which returns its failure or null).
  /// `settled(d)`: device d reaches no more effects (finished, or not here).
  /// A failed effect ends its chain (what is ordered after it is dropped) and
  /// goes to `fail(error)`, called with the lock held.
  template <class Settled, class Perform, class Fail>
  void emit_locked(std::unique_lock<std::mutex>& lock, Settled&& settled, Perform&& perform, Fail&& fail) {
    if (emitting_) return;
    emitting_ = true;
    for (bool progress = true; progress;) {
      progress = false;
      for (Chain& c : *chains_) {
        Pending p;
        while (next_locked(c, p, settled)) {
          progress = true;
          lock.unlock();
          std::exception_ptr error = perform(p);
          p.effect.reset();
          lock.lock();
          if (error) {
            c.broken = true;
            for (auto& q : c.queues) q.clear();
            c.buffered = 0;
            fail(error);
          }
        }
      }
    }
    emitting_ = false;
  }

 private:
  struct Chain {
    std::vector<std::deque<Pending>> queues;  // per device, in sequence order
    std::vector<std::int64_t> reached;        // per device: effects of this kind reached so far
    std::int64_t seq = 0;                     // the next slot to perform is (seq, dev)
    std::int32_t dev = 0;
    std::int64_t buffered = 0;
    bool broken = false;  // an effect failed: the rest of the chain is dropped
  };

  // The next effect of chain `c` in (sequence, device) order, if its turn has
  // come: every earlier slot was performed, or belongs to a device that has
  // settled (or has passed it without an effect of this kind).
  template <class Settled>
  static bool next_locked(Chain& c, Pending& out, Settled& settled) {
    const auto n = static_cast<std::int32_t>(c.queues.size());
    while (c.buffered > 0 && !c.broken) {
      if (c.dev == n) {
        c.dev = 0;
        ++c.seq;
        continue;
      }
      const auto d = static_cast<std::size_t>(c.dev);
      auto& q = c.queues[d];
      if (!q.empty() && q.front().seq == c.seq) {
        out = std::move(q.front());
        q.pop_front();
        --c.buffered;
        ++c.dev;
        return true;
      }
      if (c.reached[d] > c.seq || settled(c.dev)) {
        ++c.dev;  // no effect at (seq, d), and none will come
        continue;
      }
      return false;  // device d has not reached slot (seq, d) yet
    }
    return false;
  }

  std::unique_ptr<std::array<Chain, num_ordered_effects>> chains_;
  bool emitting_ = false;
};

}  // namespace refx::detail
