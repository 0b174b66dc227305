// Right permute on 8 devices (pallas-semantics b.1 with the neighbour barrier
// of b.7): every device sends its block to its right neighbour. Before
// sending, each device tells both neighbours it has entered the kernel (a
// barrier semaphore, so the signal is safe whenever it arrives) and waits for
// both: its right neighbour is then ready to receive.
//
// Prints one check line and the remote-copy bandwidth; exits non-zero if any
// device holds the wrong block.

#include <chrono>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include <refx/refx.hpp>

namespace {
using namespace refx;

constexpr int kDevices = 8;
constexpr std::int64_t kRows = 256, kCols = 1024;  // 1 MiB of f32 per device

auto right_permute() {
  return kernel([](HbmRef<const float, kRows, kCols> x, HbmRef<float, kRows, kCols> y) {
           auto me = axis_index("x");
           auto n = axis_size("x");
           auto right = (me + 1) % n;
           auto left = (me + n - 1) % n;

           // Neighbour barrier: "I am here" to both neighbours, then wait for both.
           auto barrier = get_barrier_semaphore();
           semaphore_signal(barrier, 1, left);
           semaphore_signal(barrier, 1, right);
           semaphore_wait(barrier, 2);

           run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
             auto copy = make_async_remote_copy(x, y, send, recv, right);
             copy.start();
             copy.wait();  // wait_send (x may be reused), then wait_recv (y holds left's block)
           });
         })
      .name("ppermute_right")
      .collective_id(0)
      .compile(Mesh{{"x", kDevices}});
}

float value(int device, std::int64_t i) { return static_cast<float>(device * 1000003 + i % 999983); }

}  // namespace

int main() {
  const Executable exe = right_permute();
  const Array x = Array::generate<float>(kDevices, Shape{kRows, kCols}, value);

  // One checked call.
  const std::vector<Array> out = exe(x);
  int wrong = 0;
  for (int d = 0; d < kDevices; ++d) {
    const std::vector<float> got = out[0].to_host<float>(d);
    const int from = (d + kDevices - 1) % kDevices;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != value(from, static_cast<std::int64_t>(i))) {
        if (wrong++ < 5) fmt::print("device {} element {}: got {}, want {}\n", d, i, got[i], value(from, static_cast<std::int64_t>(i)));
      }
  }

  // Timed calls, back to back (each dispatch returns at once; launches run in
  // order). The output is written in place so that the timing shows the
  // copies, not the page faults of a fresh 8 MiB output per call.
  constexpr int reps = 20;
  Array y = out[0];
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) exe.call_in_place({x, y});
  y.block_until_ready();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double bytes = static_cast<double>(reps) * kDevices * kRows * kCols * sizeof(float);

  fmt::print("ppermute_right: {} devices, {} KiB per device: {}\n", kDevices, kRows * kCols * 4 / 1024,
             wrong == 0 ? "ok" : fmt::format("WRONG ({} elements)", wrong));
  fmt::print("ppermute_right: {} calls in {:.3f} ms, {:.2f} GB/s of remote copies ({:.1f} us per call)\n", reps,
             secs * 1e3, bytes / secs / 1e9, secs / reps * 1e6);
  return wrong == 0 ? 0 : 1;
}
