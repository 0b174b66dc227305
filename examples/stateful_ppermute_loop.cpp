// The ppermute loop from JAX's async design note, with stateful Refs.
//
// With value semantics, a loop of split-phase permutes (start; other work;
// done) needs care: the compiler may move work across start/done, free the
// source while the copy still reads it, or copy a buffer the copy writes
// into. With Refs, ppermute_start(src, dst, axis, shift) and
// ppermute_done(future) order themselves by the Refs they touch, the
// buffers live as long as their scope, and nothing is copied defensively.
// What remains is the one rule the note ends with: a permute from a buffer
// into itself is meaningless, so the loop alternates the two slots of a
// DoubleBuffer -- x -> y on even steps, y -> x on odd ones.
//
// Each step also does independent work while its permute is in flight: it
// adds the block it is sending into a running sum (reading a permute's source
// is fine; only the destination is off limits until done).

#include <chrono>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;

constexpr int kN = 4;
constexpr std::int64_t kBlock = 1 << 14;  // floats: 64 KiB
constexpr int kSteps = 2 * kN;            // every block goes around the ring twice
constexpr int kReps = 20;

const auto permute_loop = [](HbmRef<const float, kBlock> in, HbmRef<float, kBlock> out, VmemRef<float, kBlock> seen) {
  run_scoped([&](DoubleBuffer<float, kBlock> buf) {
    const auto x = buf.at(0), y = buf.at(1);  // the two slots
    sync_copy(in, x);
    seen.store(0.0f);
    // One traced loop body; each branch names its slots statically.
    fori_loop(0, kSteps, [&](Scalar<std::int32_t> step) {
      when(step % 2 == 0, [&] {
        const auto f = ppermute_start(x, y, "x", 1);  // my x -> right neighbour's y
        seen += x.load();                             // overlaps with the copy
        ppermute_done(f);                             // y now holds my left neighbour's block
      });
      when(step % 2 == 1, [&] {
        const auto f = ppermute_start(y, x, "x", 1);
        seen += y.load();
        ppermute_done(f);
      });
    });
    sync_copy(buf.at(kSteps % 2), out);  // after 2N steps: my own block again
  });
};

float input(int d, std::int64_t i) { return static_cast<float>(d * 100 + i % 50); }

bool correct(const std::vector<Array>& r) {
  for (int d = 0; d < kN; ++d) {
    const std::vector<float> out = r[0].to_host<float>(d), seen = r[1].to_host<float>(d);
    for (std::int64_t i = 0; i < kBlock; ++i) {
      float all = 0;  // every device's block passed through here twice
      for (int e = 0; e < kN; ++e) all += input(e, i);
      if (out[static_cast<std::size_t>(i)] != input(d, i) || seen[static_cast<std::size_t>(i)] != 2 * all) return false;
    }
  }
  return true;
}
}  // namespace

int main() {
  const Mesh mesh{{"x", kN}};
  const Executable exe = kernel(permute_loop).name("permute_loop").compile(mesh);
  const Array in = Array::generate<float>(kN, Shape{kBlock}, input);
  const bool ok = correct(exe(in));

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Array> last;
  for (int r = 0; r < kReps; ++r) last = exe(in);
  last[0].block_until_ready();
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kReps / kSteps;
  fmt::print("stateful ppermute loop: {}  N={} block={} KiB  {} steps  {:8.1f} us/step  {:6.2f} GB/s per device\n",
             ok ? "ok" : "WRONG", kN, kBlock * sizeof(float) / 1024, kSteps, t * 1e6,
             static_cast<double>(kBlock * sizeof(float)) / t / 1e9);

  // The rule the types cannot check: a permute from a Ref into itself is
  // rejected when the kernel is traced.
  try {
    (void)kernel([](VmemRef<float, kBlock> x) { ppermute_done(ppermute_start(x, x, "x", 1)); }).compile(mesh);
    fmt::print("a permute from x into x compiled: WRONG\n");
    return 1;
  } catch (const TraceError& e) {
    fmt::print("a permute from x into x is rejected: ok\n  ({})\n", e.what());
  }
  return ok ? 0 : 1;
}
