// The ring all-reduce from the library, chosen explicitly with
// Algorithm::ring, used in place on a kernel's own Ref.
//
// A ring all-reduce is a reduce-scatter followed by an all-gather over the
// same ring: N - 1 steps in which partial sums of the N chunks travel right
// and are combined on arrival (device me ends with chunk me complete), then
// N - 1 steps in which the complete chunks travel right and overwrite. Each
// device only talks to its neighbours and sends 2 (N-1)/N of x in all --
// what a ring or torus network wants, and the minimum any all-reduce needs.
// (Above 128 KiB Algorithm::automatic picks the ring's reduce-scatter
// followed by a direct all-gather, Algorithm::ring_direct, which suits
// shared memory: same bytes, N rounds instead of 2 (N - 1).)

#include <chrono>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>  // Runtime::global()

namespace {
using namespace refx;
using collectives::Algorithm;
using collectives::Direction;

constexpr int kN = 4;
constexpr std::int64_t kElems = 1 << 18;  // floats per device: 1 MiB
constexpr int kReps = 30;

float input(int d, std::int64_t i) { return static_cast<float>((d + 1) * (i % 11)); }  // sums are exact

bool all_reduced(const Array& x) {
  for (int d = 0; d < kN; ++d) {
    if (!x.is_local(d)) continue;  // under mpirun: another rank's device (docs/transport.md)
    const std::vector<float> got = x.to_host<float>(d);
    for (std::int64_t i = 0; i < kElems; ++i) {
      float want = 0;
      for (int e = 0; e < kN; ++e) want += input(e, i);
      if (got[static_cast<std::size_t>(i)] != want) return false;
    }
  }
  return true;
}
}  // namespace

int main() {
  const Mesh mesh{{"x", kN}};
  // The kernel: in place on its one Ref (a writable parameter, so the caller's
  // Array is updated with call_in_place -- no output is allocated, nothing is copied in or out).
  const Executable exe = kernel([](HbmRef<float, kElems> x) {
                           collectives::all_reduce(x, "x", ReduceOp::sum, Direction::unidirectional, Algorithm::ring);
                         })
                             .name("ring_all_reduce")
                             .compile(mesh);

  Array x = Array::generate<float>(kN, Shape{kElems}, input);
  const std::int64_t before = Runtime::global().totals().bytes_copied;
  exe.call_in_place({x});
  const bool ok = all_reduced(x);
  const std::int64_t bytes = Runtime::global().totals().bytes_copied - before;

  // Time back-to-back calls (the values keep growing; it does not matter here).
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < kReps; ++r) exe.call_in_place({x});
  x.block_until_ready();
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kReps;

  // NCCL's bus bandwidth for an all-reduce: 2 (N-1)/N of x per device.
  const double busbw = 2.0 * (kN - 1) / kN * static_cast<double>(kElems * sizeof(float)) / t / 1e9;
  // The runtime's byte counter: every chunk crossed N - 1 links in each half,
  // 2 (N-1) x in all -- the minimum, so no defensive copy was made.
  const std::int64_t minimum = 2 * (kN - 1) * kElems * static_cast<std::int64_t>(sizeof(float));
  fmt::print("ring all_reduce: {}  N={} x={} KiB  {:8.1f} us/op  busbw {:6.2f} GB/s  copied {} KiB/call (minimum {} KiB)\n",
             ok ? "ok" : "WRONG", kN, kElems * sizeof(float) / 1024, t * 1e6, busbw, bytes / 1024, minimum / 1024);
  return ok && bytes == minimum ? 0 : 1;
}
