// Differential test: random programs (Ref ops on random regions, elementwise
// arithmetic, local copies with their waits, REGULAR semaphore signal/wait
// pairs, fori_loops with static bounds and traced indices, `when`) give
// bit-identical results with the passes on and off, and equal the reference
// interpreter on the unmodified graph. The passes-on graph also runs with
// copies that land only when waited (the latest moment the semantics allow),
// which exposes any op the scheduler moved into a copy's window.
//
// A program is a kernel whose body is driven by a seeded std::mt19937: the
// random choices happen while tracing.

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "support/graph_testing.hpp"
#include "support/program_generator.hpp"
#include <refx/ir/interpret.hpp>
#include <refx/ir/eval.hpp>
#include <refx/passes/pipeline.hpp>

using namespace refx;

namespace {

constexpr std::int64_t rows = 6, cols = 256;
using Full = VmemRef<float, rows, cols>;
using Region = Ref<float, dyn_extents<2>, Vmem>;
using Val = Value<float, dyn_extents<2>>;

/// Copies land when their semaphore is waited, not when they start.
class LazyCopies final : public ExecEnv {
 public:
  void copy_start(ExecContext&, const Op& op, const CopyRequest& r) override { pending_.push_back({&op, r}); }
  bool semaphore_wait(ExecContext& ctx, const Op& op, ValueId sem, std::int64_t index, std::int64_t value) override {
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->request.recv_sem == sem && it->request.recv_index == index) {
        ExecEnv::copy_start(ctx, *it->op, it->request);
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
    return ExecEnv::semaphore_wait(ctx, op, sem, index, value);
  }

 private:
  struct Pending {
    const Op* op;
    CopyRequest request;
  };
  std::vector<Pending> pending_;
};

class Generator : refx::testing::ProgramGenerator<Generator> {
 public:
  Generator(std::uint32_t seed, std::vector<Full> refs, DmaSemaphores<2> dma, RegularSemaphores<2> reg)
      : ProgramGenerator(seed, reg), refs_(std::move(refs)), dma_(dma) {}

  void program() {
    const int n = between(8, 40);
    for (int k = 0; k < n; ++k) statement(0);
    drain(0);
  }

 private:
  friend ProgramGenerator;
  struct Flight {
    AsyncCopy copy;
    Region src, dst;
    int src_ref, dst_ref, sem, frame;
  };

  bool blocked(int r) const {
    for (const Flight& f : flights_)
      if (f.src_ref == r || f.dst_ref == r) return true;
    return false;
  }
  int free_ref() {
    for (;;) {
      const int r = between(0, static_cast<int>(refs_.size()) - 1);
      if (!blocked(r)) return r;
    }
  }

  // One dimension: ds(start, size, stride) inside `extent`, sometimes at a
  // traced start (the loop index plus an offset).
  Slice slice(std::int64_t size, std::int64_t extent, bool allow_traced) {
    const std::int64_t stride = size > 1 && coin(30) ? between(2, 3) : 1;
    std::int64_t span = (size - 1) * stride + 1;
    if (span > extent) return slice(size, extent, allow_traced);
    if (allow_traced && loop_ && coin(40) && span + loop_hi_ - 1 <= extent) {
      const std::int64_t off = between(0, static_cast<int>(extent - span - (loop_hi_ - 1)));
      return ds(*loop_ + static_cast<std::int32_t>(off), size, stride);
    }
    return ds(between(0, static_cast<int>(extent - span)), size, stride);
  }
  Region region(int r, std::int64_t h, std::int64_t w) {
    return refs_[static_cast<std::size_t>(r)].at(slice(h, rows, true), slice(w, cols, false));
  }

  Val expr(std::int64_t h, std::int64_t w, int budget) {
    const TypedShape<dyn_extents<2>> shape{Shape{h, w}};
    if (budget <= 0 || coin(25)) {
      if (coin(20)) return full<float>(shape, static_cast<float>(between(-8, 8)) * 0.5f);
      return region(free_ref(), h, w).load();
    }
    const Val a = expr(h, w, budget - 1);
    return combine(
        a, [&] { return expr(h, w, budget - 1); },
        [&](const Val& x) { return x * full<float>(shape, 0.75f) + full<float>(shape, 1.0f); });
  }

  void compute() {
    const std::int64_t h = between(1, static_cast<int>(rows)), w = coin(30) ? cols : between(1, static_cast<int>(cols));
    const Val v = expr(h, w, between(0, 4));
    const Region target = region(free_ref(), h, w);
    if (coin(25)) target += v;
    else target.store(v);
  }

  void start_copy(int frame) {
    if (flights_.size() >= 2) return;
    const int sem = flights_.empty() ? between(0, 1) : 1 - flights_.front().sem;
    const int s = free_ref();
    int d = free_ref();
    if (d == s) return;
    const std::int64_t h = between(1, static_cast<int>(rows)), w = between(1, static_cast<int>(cols));
    const Region src = region(s, h, w), dst = region(d, h, w);
    auto c = make_async_copy(src, dst, dma_.at(sem));
    if (coin(20)) c.start(accumulate);
    else c.start();
    flights_.push_back({c, src, dst, s, d, sem, frame});
  }

  void wait_copy(std::size_t k) {
    const Flight f = flights_[k];
    if (coin(30)) make_async_copy(f.src, f.dst, dma_.at(f.sem)).wait();  // an equal, fresh descriptor
    else f.copy.wait();
    flights_.erase(flights_.begin() + static_cast<std::ptrdiff_t>(k));
  }

  void nested(bool loop) {
    const int lo = between(0, 2), hi = lo + between(1, 3);
    const int frame = ++frames_;
    const auto body = [&] { block(frame); };
    if (!loop) {
      when(*loop_ % 2 == 0, body);
      return;
    }
    in_loop(lo, hi, body);
  }

  void statement(int frame) {
    const int kind = between(0, 99);
    if (kind < 40) compute();
    else if (kind < 55) start_copy(frame);
    else if (kind < 65) wait_oldest(flights_, frame, [&](std::size_t k) { wait_copy(k); });
    else if (kind < 75) signal();
    else if (kind < 83) wait_signals(false);
    else if (kind < 95 && depth_ < 2) nested(true);
    else if (loop_ && depth_ < 2) nested(false);
    else compute();
  }

  // Everything a block started is waited before it ends.
  void drain(int frame) {
    wait_all(flights_, frame, [&](std::size_t k) { wait_copy(k); });
    wait_signals(true);
  }

  std::vector<Full> refs_;
  DmaSemaphores<2> dma_;
  std::vector<Flight> flights_;
};

Graph random_program(std::uint32_t seed) {
  return trace([seed](Full a, Full b, Full c, Full d) {
    run_scoped([&](Full s, DmaSemaphores<2> dma, RegularSemaphores<2> reg) {
      s.store(full<float, rows, cols>(0.5f));
      Generator(seed, {a, b, c, d, s}, dma, reg).program();
    });
  });
}

std::vector<Buffer> inputs(std::uint32_t seed) {
  std::vector<Buffer> args;
  for (int k = 0; k < 4; ++k)
    args.push_back(refx::testing::make_buffer_fn<float>(Shape{rows, cols}, [&](std::int64_t i) {
      return static_cast<float>(static_cast<int>((i * 2654435761u + seed * 97u + static_cast<unsigned>(k) * 31u) % 401) - 200) * 0.125f;
    }));
  return args;
}

std::vector<Buffer> run(const Graph& g, std::uint32_t seed, bool lazy) {
  std::vector<Buffer> args = inputs(seed);
  std::vector<Buffer*> ptrs;
  for (auto& a : args) ptrs.push_back(&a);
  LazyCopies lazy_env;
  ExecEnv eager_env;
  interpret(g, ptrs, lazy ? static_cast<ExecEnv&>(lazy_env) : eager_env);
  return args;
}

bool same(const std::vector<Buffer>& a, const std::vector<Buffer>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].bytes() != b[i].bytes() || std::memcmp(a[i].data(), b[i].data(), a[i].bytes()) != 0) return false;
  return true;
}

TEST(Differential, RandomProgramsAgreeWithAndWithoutPasses) {
  constexpr std::uint32_t programs = 600;
  std::size_t fused = 0, moved = 0, copies = 0, loops = 0;
  for (std::uint32_t seed = 1; seed <= programs; ++seed) {
    const Graph reference = random_program(seed);
    Graph off = reference, on = reference;
    passes::Options none;
    none.dce = none.schedule = none.fuse = false;
    ASSERT_NO_THROW(passes::run_pipeline(off, none)) << "seed " << seed << "\n" << to_text(reference);
    passes::run_pipeline(on);
    moved += passes::schedule(off) > 0;  // how many programs the scheduler reorders
    fused += refx::testing::count_ops(on, "fused") > 0;
    copies += refx::testing::count_ops(reference, "dma_start") > 0;
    loops += refx::testing::count_ops(reference, "fori_loop") > 0;

    const auto want = run(reference, seed, false);
    ASSERT_TRUE(same(run(reference, seed, true), want)) << "seed " << seed << ": the program itself races\n"
                                                        << to_text(reference);
    ASSERT_TRUE(same(run(on, seed, false), want)) << "seed " << seed << "\n" << to_text(reference) << "\n" << to_text(on);
    ASSERT_TRUE(same(run(on, seed, true), want)) << "seed " << seed << " (copies landing at their waits)\n"
                                                 << to_text(reference) << "\n" << to_text(on);
  }
  fmt::print("fused {} moved {} copies {} loops {} of {}\n", fused, moved, copies, loops, programs);
  // The generator must exercise what it claims to.
  EXPECT_GT(fused, programs / 2);
  EXPECT_GT(moved, programs / 4);
  EXPECT_GT(copies, programs / 2);
  EXPECT_GT(loops, programs / 2);
}

}  // namespace
