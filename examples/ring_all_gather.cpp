// A ring all-gather written by hand with remote copies and semaphores
// (the Pallas TPU tutorial's all-gather, pallas-semantics b.2), checked
// against the host and against the library's collectives::all_gather.
//
// Every device holds one block x. Afterwards every device's out (N, block)
// holds device e's block in slot e. On a ring, each device only ever talks to
// its right neighbour: at step s it forwards the block it received s steps
// ago, so after N - 1 steps every block has visited every device.

#include <chrono>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;

constexpr int kN = 4;                     // devices on the ring
constexpr std::int64_t kBlock = 1 << 16;  // floats per device: 256 KiB
constexpr int kReps = 50;

// The kernel every device runs (SPMD). Sizes are compile-time constants, so
// the Refs carry static extents.
const auto ring_all_gather = [](HbmRef<const float, kBlock> x, HbmRef<float, kN, kBlock> out) {
  const auto me = axis_index("x");
  const auto right = (me + 1) % kN;
  // N - 1 receive semaphores, one per step. A DMA semaphore counts bytes, so
  // if my left neighbour ran a step ahead, two of its copies into my out would
  // be indistinguishable on one semaphore; with one per step, each wait below
  // is for exactly the copy of that step. N slots in out mean no slot is ever
  // written twice, so no handshake with the receiver is needed.
  run_scoped([&](DmaSemaphore local, DmaSemaphore send, DmaSemaphores<kN - 1> recv) {
    // My own block goes into my own slot first: step 0 forwards it from there.
    const auto own = make_async_copy(x, out.at(me), local);
    own.start();
    own.wait();
    // A plain C++ loop: it unrolls while the kernel is traced (N is static).
    for (int s = 0; s < kN - 1; ++s) {
      const auto slot = (me + (kN - s)) % kN;  // the block that arrived s steps ago
      const auto c = make_async_remote_copy(out.at(slot), out.at(slot), send, recv.at(s), right);
      c.start();
      // wait() = wait_send (out[slot] has been read) + wait_recv: a copy of
      // this size has landed here on recv[s]. It is my left neighbour's step-s
      // copy, into slot me - s - 1 -- which step s + 1 forwards.
      c.wait();
    }
  });
};

/// Seconds per call of `call` (dispatched back to back, then waited for).
template <class F>
double seconds_per_call(F&& call) {
  call().block_until_ready();  // warm up
  const auto t0 = std::chrono::steady_clock::now();
  Array last;
  for (int r = 0; r < kReps; ++r) last = call();
  last.block_until_ready();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kReps;
}

/// Slot e of every device's out holds device e's block.
bool gathered(const Array& out, const Array& x) {
  for (int d = 0; d < kN; ++d) {
    const std::vector<float> got = out.to_host<float>(d);
    for (int e = 0; e < kN; ++e) {
      const std::vector<float> block = x.to_host<float>(e);
      for (std::int64_t i = 0; i < kBlock; ++i)
        if (got[static_cast<std::size_t>(e * kBlock + i)] != block[static_cast<std::size_t>(i)]) return false;
    }
  }
  return true;
}

bool report(const char* what, bool ok, double seconds) {
  // NCCL's bus bandwidth for an all-gather: each device receives (N-1) blocks.
  const double busbw = static_cast<double>((kN - 1) * kBlock * sizeof(float)) / seconds / 1e9;
  fmt::print("{:<34} {}  N={} block={} KiB  {:8.1f} us/op  busbw {:6.2f} GB/s\n", what, ok ? "ok" : "WRONG", kN,
             kBlock * sizeof(float) / 1024, seconds * 1e6, busbw);
  return ok;
}
}  // namespace

int main() {
  const Mesh mesh{{"x", kN}};
  const Array x = Array::generate<float>(kN, Shape{kBlock}, [](int d, std::int64_t i) { return d * 1000.0f + i % 997; });

  // The hand-written ring.
  const Executable mine = kernel(ring_all_gather).name("ring_all_gather").compile(mesh);
  const bool ok1 = gathered(mine(x)[0], x);
  const double t1 = seconds_per_call([&] { return mine(x)[0]; });

  // The library's: the same ring, plus an entry handshake so that it is also
  // safe inside a kernel that used `out` before the call.
  const Executable lib = collectives::all_gather_program<float>(mesh, kBlock);
  const bool ok2 = gathered(lib(x)[0], x);
  const double t2 = seconds_per_call([&] { return lib(x)[0]; });

  const bool ok = report("ring_all_gather (hand-written):", ok1, t1) & report("collectives::all_gather:", ok2, t2);
  return ok ? 0 : 1;
}
