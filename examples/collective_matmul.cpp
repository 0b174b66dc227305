// A collective matmul written by hand, next to the library's
// collectives::collective_matmul, at the sizes users run: 4 devices, a
// 256 x 1024 block of A each, and B of 1024 x 1024 (compute-bound) or
// 1024 x 32 (a block's copy takes about as long as its product).
//
// Each device holds a row block a (m, k) of a matrix A sharded over the
// ring, and its own b (k, n). It wants out = A @ b, where A = all_gather(a)
// is (N m, k). Gathering A first and multiplying after leaves the compute
// idle while data moves. Instead, at step s each device multiplies the block
// it holds now (device me - s's rows) while that block is already on its way
// to the right neighbour: communication hides behind compute.
//
// The inputs are bf16 or f32 and the product accumulates in f32
// (dot<float>). Each run prints its time per call next to the two things it
// overlaps, measured alone: the N local products without communication, and
// the all-gather of A without compute. overlap = collective / max(the two):
// 1.0 means the communication is hidden completely.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;

constexpr int kN = 4;
constexpr std::int64_t kM = 256, kK = 1024;  // a: kM x kK per device
constexpr int kReps = 3;                     // timed calls per kernel (the best counts)

template <class T, std::int64_t Cols>
void hand_written(VmemRef<const T, kM, kK> a, VmemRef<const T, kK, Cols> b, VmemRef<float, kN * kM, Cols> out) {
  const auto me = axis_index("x");
  const auto left = (me + kN - 1) % kN, right = (me + 1) % kN;
  // Two slots: one is multiplied while the other receives the next block.
  run_scoped([&](DoubleBuffer<T, kM, kK> blocks, RegularSemaphore capacity, DmaSemaphore send, DmaSemaphore recv) {
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
      out.at(ds(owner * static_cast<std::int32_t>(kM), kM)).store(dot<float>(cur.load(), rhs));
      if (c) c->wait();  // my block has left; the next one has arrived
    }
  });
}

// Small integers: every product and sum is exact in bf16 inputs and f32 sums.
template <class T>
T a_in(int d, std::int64_t i) { return T((d * 7 + i) % 5 - 2); }
template <class T>
T b_in(int d, std::int64_t i) { return T((d + 3 * i) % 7 - 3); }

/// Rows of out (every 61st, on every device) equal all_gather(a) @ b_d computed on the host.
template <class T, std::int64_t Cols>
bool correct(const Array& out) {
  for (int d = 0; d < kN; ++d) {
    const std::vector<float> got = out.to_host<float>(d);
    for (std::int64_t r = 0; r < kN * kM; r += 61)
      for (std::int64_t j = 0; j < Cols; ++j) {
        float want = 0;
        for (std::int64_t p = 0; p < kK; ++p)
          want += float(a_in<T>(static_cast<int>(r / kM), (r % kM) * kK + p)) * float(b_in<T>(d, p * Cols + j));
        if (got[static_cast<std::size_t>(r * Cols + j)] != want) return false;
      }
  }
  return true;
}

/// The best of kReps calls, in milliseconds.
template <class... Args>
double best_ms(const Executable& exe, const Args&... args) {
  double best = 1e300;
  for (int r = 0; r < kReps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    exe(args...)[0].block_until_ready();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

template <class T, std::int64_t Cols>
bool run(bool with_hand_written) {
  const Mesh mesh{{"x", kN}};
  const Array a = Array::generate<T>(kN, Shape{kM, kK}, a_in<T>);
  const Array b = Array::generate<T>(kN, Shape{kK, Cols}, b_in<T>);
  const Executable lib = kernel([](VmemRef<const T, kM, kK> lhs, VmemRef<const T, kK, Cols> rhs,
                                   VmemRef<float, kN * kM, Cols> out) { collectives::collective_matmul(lhs, rhs, out, "x"); })
                             .compile(mesh);
  // The two halves of the work, alone.
  const Executable local = kernel([](VmemRef<const T, kM, kK> lhs, VmemRef<const T, kK, Cols> rhs,
                                     VmemRef<float, kN * kM, Cols> out) {
                             const auto r = rhs.load();
                             for (int s = 0; s < kN; ++s) out.at(ds(s * kM, kM)).store(dot<float>(lhs.load(), r));
                           }).compile(mesh);
  const Executable gather = kernel([](VmemRef<const T, kM, kK> lhs, VmemRef<T, kN, kM, kK> all) {
                              collectives::all_gather(lhs, all, "x");
                            }).compile(mesh);
  const std::string_view type = name_of(dtype_v<T>);
  bool ok = correct<T, Cols>(lib(a, b)[0]);
  const double t_lib = best_ms(lib, a, b), t_local = best_ms(local, a, b), t_gather = best_ms(gather, a);
  fmt::print("collectives::collective_matmul {:>4} b={}x{}: {}  {:7.2f} ms/call; alone: products {:7.2f} ms, "
             "all-gather {:6.2f} ms; overlap {:.2f}\n",
             type, kK, Cols, ok ? "ok" : "WRONG", t_lib, t_local, t_gather, t_lib / std::max(t_local, t_gather));
  if (with_hand_written) {
    const Executable mine = kernel(hand_written<T, Cols>).name("collective_matmul").compile(mesh);
    const bool mine_ok = correct<T, Cols>(mine(a, b)[0]);
    const double t_mine = best_ms(mine, a, b);
    fmt::print("hand-written collective matmul  {:>4} b={}x{}: {}  {:7.2f} ms/call; overlap {:.2f}\n", type, kK, Cols,
               mine_ok ? "ok" : "WRONG", t_mine, t_mine / std::max(t_local, t_gather));
    ok = ok && mine_ok;
  }
  return ok;
}
}  // namespace

int main() {
  bool ok = run<bf16, 1024>(true);
  ok = run<bf16, 32>(true) && ok;
  ok = run<float, 1024>(false) && ok;
  ok = run<float, 32>(false) && ok;
  return ok ? 0 : 1;
}
