// A collective matmul written by hand, next to the library's
// collectives::collective_matmul.
//
// Each device holds a row block a (m, k) of a matrix A sharded over the
// ring, and its own b (k, n). It wants out = A @ b, where A = all_gather(a)
// is (N m, k). Gathering A first and multiplying after leaves the compute
// idle while data moves. Instead, at step s each device multiplies the block
// it holds now (device me - s's rows) while that block is already on its way
// to the right neighbour: communication hides behind compute.

#include <chrono>
#include <cstdio>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;

constexpr int kN = 4;
constexpr std::int64_t kM = 32, kK = 64, kCols = 32;  // a: kM x kK, b: kK x kCols per device
constexpr int kReps = 10;

const auto collective_matmul = [](VmemRef<const float, kM, kK> a, VmemRef<const float, kK, kCols> b,
                                  VmemRef<float, kN * kM, kCols> out) {
  const auto me = axis_index("x");
  const auto left = (me + kN - 1) % kN, right = (me + 1) % kN;
  // Two slots: one is multiplied while the other receives the next block.
  run_scoped([&](DoubleBuffer<float, kM, kK> blocks, RegularSemaphore capacity, DmaSemaphore send, DmaSemaphore recv) {
    blocks.at(0).store(a.load());
    const auto rhs = b.load();
    for (int s = 0; s < kN; ++s) {
      const auto cur = blocks.at(s % 2), next = blocks.at((s + 1) % 2);
      std::optional<AsyncRemoteCopy> c;
      if (s + 1 < kN) {
        // My right neighbour's `next` slot is the one it multiplied in its
        // previous step: wait until it says it is done with it (and tell my
        // left neighbour the same about mine).
        semaphore_signal(capacity, 1, left);
        semaphore_wait(capacity, 1);
        c = make_async_remote_copy(cur, next, send, recv, right);
        c->start();  // in flight during the dot below: it only reads `cur`
      }
      const auto owner = (me + (kN - s)) % kN;  // whose rows `cur` holds
      out.at(ds(owner * static_cast<std::int32_t>(kM), kM)).store(dot(cur.load(), rhs));
      if (c) c->wait();  // my block has left; the next one has arrived
    }
  });
};

// Small integers: every product and sum is exact in float.
float a_in(int d, std::int64_t i) { return static_cast<float>((d * 7 + i) % 5 - 2); }
float b_in(int d, std::int64_t i) { return static_cast<float>((d + 3 * i) % 7 - 3); }

/// out on device d equals all_gather(a) @ b_d computed on the host.
bool correct(const Array& out) {
  for (int d = 0; d < kN; ++d) {
    const std::vector<float> got = out.to_host<float>(d);
    for (std::int64_t r = 0; r < kN * kM; ++r)
      for (std::int64_t j = 0; j < kCols; ++j) {
        float want = 0;
        for (std::int64_t p = 0; p < kK; ++p) want += a_in(static_cast<int>(r / kM), (r % kM) * kK + p) * b_in(d, p * kCols + j);
        if (got[static_cast<std::size_t>(r * kCols + j)] != want) return false;
      }
  }
  return true;
}

bool run(const char* what, const Executable& exe, const Array& a, const Array& b) {
  const bool ok = correct(exe(a, b)[0]);
  const auto t0 = std::chrono::steady_clock::now();
  Array last;
  for (int r = 0; r < kReps; ++r) last = exe(a, b)[0];
  last.block_until_ready();
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kReps;
  const double flops = 2.0 * kN * kN * kM * kK * kCols;  // every device: (N m) x k x n
  fmt::print("{:<36} {}  N={} a={}x{} b={}x{}  {:8.1f} us/op  {:6.2f} GFLOP/s\n", what, ok ? "ok" : "WRONG", kN, kM,
             kK, kK, kCols, t * 1e6, flops / t / 1e9);
  return ok;
}
}  // namespace

int main() {
  const Mesh mesh{{"x", kN}};
  const Array a = Array::generate<float>(kN, Shape{kM, kK}, a_in);
  const Array b = Array::generate<float>(kN, Shape{kK, kCols}, b_in);
  const Executable mine = kernel(collective_matmul).name("collective_matmul").compile(mesh);
  const Executable lib = kernel([](VmemRef<const float, kM, kK> lhs, VmemRef<const float, kK, kCols> rhs,
                                   VmemRef<float, kN * kM, kCols> out) { collectives::collective_matmul(lhs, rhs, out, "x"); })
                             .compile(mesh);
  const bool ok = run("collective_matmul (hand-written):", mine, a, b) & run("collectives::collective_matmul:", lib, a, b);
  return ok ? 0 : 1;
}
