// A ring reduce-scatter written by hand with combining copies and a capacity
// handshake, checked against the host and against the library's
// collectives::reduce_scatter_in_place.
//
// Every device holds x = N chunks. Afterwards chunk d of device d holds the
// sum of chunk d over all devices. Partial sums travel around the ring: at
// step s each device adds its chunk (me - s - 1) into the same chunk on its
// right neighbour -- a copy started with `accumulate` adds into the
// destination, as Pallas' start(add=True), so no staging buffer and no extra
// local pass are needed. After N - 1 steps the chunk that arrives last at
// device me is chunk me, with every device's contribution.

#include <chrono>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>  // Runtime::global()

namespace {
using namespace refx;

constexpr int kN = 4;                     // devices on the ring
constexpr std::int64_t kChunk = 1 << 15;  // floats per chunk: x is 4 x 128 KiB per device
constexpr std::int64_t kElems = kN * kChunk;
constexpr int kReps = 50;

const auto ring_reduce_scatter = [](HbmRef<float, kN, kChunk> x) {
  const auto me = axis_index("x");
  const auto left = (me + kN - 1) % kN, right = (me + 1) % kN;
  run_scoped([&](RegularSemaphore capacity, DmaSemaphore send, DmaSemaphore recv) {
    for (int s = 0; s < kN - 1; ++s) {
      // The capacity handshake: tell the device that adds into my x that I
      // am ready for step s, and wait until the device I add into says the
      // same. It keeps neighbours within one step. Without it I could run
      // ahead and add into a chunk my right neighbour is still sending (for
      // N = 3, my step 1 adds into the chunk it sends in step 0).
      semaphore_signal(capacity, 1, left);
      semaphore_wait(capacity, 1);
      const auto out_chunk = (me + (2 * kN - s - 1)) % kN;  // me - s - 1
      const auto in_chunk = (me + (2 * kN - s - 2)) % kN;   // me - s - 2: what my left neighbour adds into
      const auto c = make_async_remote_copy(x.at(out_chunk), x.at(out_chunk), send, recv, right);
      c.start(accumulate);  // right's x[out_chunk] += my x[out_chunk]
      c.wait_send();
      // DMA semaphores count bytes: a descriptor of the chunk's size waits
      // for my left neighbour's copy into x[in_chunk].
      make_async_remote_copy(x.at(in_chunk), x.at(in_chunk), send, recv, right).wait_recv();
    }
    // Accounting: capacity got one signal per step (from the right) and was
    // waited once per step; send and recv rose and fell by one chunk per
    // step. Every semaphore ends at zero, as the runtime checks.
  });
};

float input(int d, std::int64_t i) { return static_cast<float>((d + 1) * (i % 13)); }  // sums are exact

/// Chunk d of device d holds the sum over devices.
bool scattered(const Array& x) {
  for (int d = 0; d < kN; ++d) {
    const std::vector<float> got = x.to_host<float>(d);
    for (std::int64_t i = d * kChunk; i < (d + 1) * kChunk; ++i) {
      float want = 0;
      for (int e = 0; e < kN; ++e) want += input(e, i);
      if (got[static_cast<std::size_t>(i)] != want) return false;
    }
  }
  return true;
}

/// Seconds per in-place call (dispatched back to back, then waited for).
double seconds_per_call(const Executable& exe, const Shape& shape) {
  Array x = Array::generate<float>(kN, shape, input);
  exe.call_in_place({x});
  x.block_until_ready();  // warm up
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < kReps; ++r) exe.call_in_place({x});
  x.block_until_ready();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kReps;
}

/// Checks one call, and reports it with its time, bus bandwidth and the
/// bytes the runtime copied per call.
bool run(const char* what, const Executable& exe, const Shape& shape) {
  Array x = Array::generate<float>(kN, shape, input);
  const std::int64_t before = Runtime::global().totals().bytes_copied;
  exe.call_in_place({x});
  const bool ok = scattered(x);
  const std::int64_t bytes = Runtime::global().totals().bytes_copied - before;
  const double t = seconds_per_call(exe, shape);
  // NCCL's bus bandwidth for a reduce-scatter: (N-1)/N of x per device.
  const double busbw = static_cast<double>((kN - 1) * kChunk * sizeof(float)) / t / 1e9;
  fmt::print("{:<38} {}  N={} x={} KiB  {:8.1f} us/op  busbw {:6.2f} GB/s  copied {} KiB/call\n", what,
             ok ? "ok" : "WRONG", kN, kElems * sizeof(float) / 1024, t * 1e6, busbw, bytes / 1024);
  return ok;
}
}  // namespace

int main() {
  const Mesh mesh{{"x", kN}};
  const Executable mine = kernel(ring_reduce_scatter).name("ring_reduce_scatter").compile(mesh);
  const Executable lib = collectives::reduce_scatter_program<float>(mesh, kElems, {.in_place = true});
  // Both move the minimum: each chunk crosses N - 1 links once, combined on
  // arrival -- (N-1) * x bytes in all, (N-1)/N of x per device.
  fmt::print("expected copies per call: {} KiB\n", (kN - 1) * kElems * sizeof(float) / 1024);
  const bool ok = run("ring_reduce_scatter (hand-written):", mine, Shape{kN, kChunk}) &
                  run("collectives::reduce_scatter_in_place:", lib, Shape{kElems});
  return ok ? 0 : 1;
}
