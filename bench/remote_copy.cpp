// Remote copies on the threaded runtime, against plain std::memcpy in the same
// run.
//
//   BM_RemoteCopy/<bytes>   2 devices, each sends its block of <bytes> to the
//                           other (one kernel call = 2 x <bytes> moved, plus a
//                           neighbour handshake and the launch itself). The
//                           output is preallocated (call_in_place) so that page
//                           faults of fresh output Arrays are not measured.
//   BM_Memcpy/<bytes>       the same bytes moved by std::memcpy on one thread
//                           (two blocks of <bytes>, same buffers every time).
//   BM_CopyRing64           64 devices, one kernel: device 0 sends an 8-byte
//                           token to 1, 1 forwards it to 2, ... 63 back to 0;
//                           time_per_hop = time / 64.
//   BM_SignalRing64         the same ring with semaphore_signal instead of copies.
//
// Counters:
//   GB/s          bytes moved per second (wall time of the timed loop)
//   memcpy_GB/s   std::memcpy of the same bytes, measured in the same process
//                 right before (BM_RemoteCopy only)
//   vs_memcpy     GB/s / memcpy_GB/s
//   time_per_hop  seconds per hop of a ring (shown with an SI prefix)
// Results and the command line: docs/perf-runtime.md.

// GCC 12 at -O3 (the bench flags) reports false -Wstringop-overflow /
// -Wrestrict positives inside refx's headers; they are off for the included
// code only (as in bench/trace_interpret.cpp).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <refx/refx.hpp>

namespace {
using namespace refx;

// ---- std::memcpy baseline

struct MemcpyBuffers {
  std::vector<std::byte> src[2], dst[2];
  explicit MemcpyBuffers(std::size_t bytes) {
    for (int k = 0; k < 2; ++k) {
      src[k].assign(bytes, std::byte{1});
      dst[k].assign(bytes, std::byte{0});
    }
  }
  void copy() {
    for (int k = 0; k < 2; ++k) std::memcpy(dst[k].data(), src[k].data(), src[k].size());
    benchmark::ClobberMemory();
  }
};

/// GB/s of std::memcpy moving 2 x `bytes` (best of several timed rounds).
double memcpy_gbps(std::size_t bytes) {
  MemcpyBuffers b(bytes);
  b.copy();  // touch every page
  const int reps = static_cast<int>(std::clamp<std::size_t>((std::size_t{256} << 20) / (2 * bytes), 2, 20000));
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) b.copy();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps);
  }
  return 2.0 * static_cast<double>(bytes) / best / 1e9;
}

void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  MemcpyBuffers b(bytes);
  b.copy();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) b.copy();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * bytes));
  state.counters["GB/s"] = 2.0 * static_cast<double>(bytes) * static_cast<double>(state.iterations()) / secs / 1e9;
}

// ---- refx: 2 devices swap their blocks

Executable swap_kernel(std::int64_t elements) {
  return kernel([](HbmRef<const float, dyn> x, HbmRef<float, dyn> y) {
           auto other = (axis_index("x") + 1) % axis_size("x");
           run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
             semaphore_signal(ready, 1, other);  // ready to receive
             semaphore_wait(ready, 1);
             auto c = make_async_remote_copy(x, y, send, recv, other);
             c.start();
             c.wait();
           });
         })
      .name("swap")
      .compile(Mesh{{"x", 2}}, {Shape{elements}, Shape{elements}});
}

void BM_RemoteCopy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const auto elements = static_cast<std::int64_t>(bytes / sizeof(float));
  const Executable exe = swap_kernel(elements);
  const Array x = Array::generate<float>(2, Shape{elements},
                                         [](int d, std::int64_t i) { return static_cast<float>(d + i % 1000); });
  Array y = Array::generate<float>(2, Shape{elements}, [](int, std::int64_t) { return 0.0f; });
  exe.call_in_place({x, y});  // warm up; check once
  if (y.to_host<float>(0)[7] != 1.0f + 7 || y.to_host<float>(1)[7] != 7.0f) {
    state.SkipWithError("wrong result");
    return;
  }
  const double base = memcpy_gbps(bytes);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    exe.call_in_place({x, y});
    y.block_until_ready();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double moved = 2.0 * static_cast<double>(bytes);
  const double gbps = moved * static_cast<double>(state.iterations()) / secs / 1e9;
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(moved));
  state.counters["GB/s"] = gbps;
  state.counters["memcpy_GB/s"] = base;
  state.counters["vs_memcpy"] = gbps / base;
}

// ---- 64-device rings

constexpr int kRing = 64;

/// Device 0 sends an 8-byte token to device 1, which forwards it, ... until
/// it is back on device 0. Device k receives into slot k % 2 and forwards
/// from there into its right neighbour's other slot (a copy never reads and
/// writes one region of a Ref).
Executable copy_ring() {
  return kernel([](HbmRef<const std::int64_t, 1> x, HbmRef<std::int64_t, 2, 1> y) {
           auto me = axis_index("x");
           auto right = (me + 1) % axis_size("x");
           run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
             when(me == 0, [&] {
               auto c = make_async_remote_copy(x, y.at(1), send, recv, right);
               c.start();
               c.wait_send();
               make_async_copy(y.at(0), y.at(0), recv).wait_recv();  // the token came back from device 63
             });
             when(me != 0, [&] {
               auto c = make_async_remote_copy(y.at(me % 2), y.at((me + 1) % 2), send, recv, right);
               c.wait_recv();  // the token arrived from the left
               c.start();      // forward it
               c.wait_send();
             });
           });
         })
      .name("copy_ring")
      .compile(Mesh{{"x", kRing}});
}

Executable signal_ring() {
  return kernel([](HbmRef<const std::int64_t, 1> x, HbmRef<std::int64_t, 1> y) {
           auto me = axis_index("x");
           auto right = (me + 1) % axis_size("x");
           sync_copy(x, y);
           run_scoped([&](RegularSemaphore token) {
             when(me == 0, [&] {
               semaphore_signal(token, 1, right);
               semaphore_wait(token, 1);
             });
             when(me != 0, [&] {
               semaphore_wait(token, 1);
               semaphore_signal(token, 1, right);
             });
           });
         })
      .name("signal_ring")
      .compile(Mesh{{"x", kRing}});
}

void run_ring(benchmark::State& state, const Executable& exe, bool check_token) {
  const Array x = Array::generate<std::int64_t>(kRing, Shape{1}, [](int d, std::int64_t) { return 1000 + d; });
  Array y = Array::generate<std::int64_t>(kRing, exe.params()[1].type.shape, [](int, std::int64_t) { return 0; });
  exe.call_in_place({x, y});
  if (check_token && (y.to_host<std::int64_t>(0)[0] != 1000 || y.to_host<std::int64_t>(kRing - 1)[1] != 1000)) {
    state.SkipWithError("the token did not go round");
    return;
  }
  for (auto _ : state) {
    exe.call_in_place({x, y});
    y.block_until_ready();
  }
  state.counters["hops"] = kRing;
  state.counters["time_per_hop"] =
      benchmark::Counter(kRing, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_CopyRing64(benchmark::State& state) { run_ring(state, copy_ring(), true); }
void BM_SignalRing64(benchmark::State& state) { run_ring(state, signal_ring(), false); }

}  // namespace

BENCHMARK(BM_Memcpy)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20)->Arg(16 << 20)->Arg(64 << 20);
BENCHMARK(BM_RemoteCopy)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20)->Arg(16 << 20)->Arg(64 << 20)->UseRealTime();
BENCHMARK(BM_CopyRing64)->UseRealTime();
BENCHMARK(BM_SignalRing64)->UseRealTime();

BENCHMARK_MAIN();
