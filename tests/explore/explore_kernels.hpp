// Kernels for the explore tests (explore_test.cpp, order_classes_test.cpp):
// one correct, three with a bug that only some schedules show.
#pragma once

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

#include "support/runtime_testing.hpp"

namespace refx::testing::explore_kernels {

constexpr std::int64_t kN = 16;
using Shard = HbmRef<const float, kN>;
using OutShard = HbmRef<float, kN>;
using In = VmemRef<const float, kN>;
using Out = VmemRef<float, kN>;

inline int g_copy_line = 0;  // shift's copy start, in this file
inline constexpr const char* kKernelsFile = __FILE__;

inline Array tagged(int n, Shape s = Shape{kN}) { return Array::generate<float>(n, s, tag); }
inline Array zeros(int n, Shape s = Shape{kN}) {
  return Array::generate<float>(n, s, [](int, std::int64_t) { return 0.0f; });
}

/// Every device sends its shard to its right neighbour; with `barrier`, it
/// first waits until both neighbours have entered (the published
/// all_gather's main_barrier). A collective_id: the kernel synchronises
/// itself, so explore lets its devices enter apart.
inline Executable shift(int n, bool barrier) {
  return kernel([barrier](Shard x, OutShard y) {
           run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
             const auto me = axis_index("x");
             const auto size = static_cast<std::int32_t>(mesh_axis_size("x"));
             const auto right = (me + 1) % size, left = (me + size - 1) % size;
             if (barrier) {
               const BarrierSemaphore b = get_barrier_semaphore();
               semaphore_signal(b, 1, left);
               semaphore_signal(b, 1, right);
               semaphore_wait(b, 2);
             }
             auto c = make_async_remote_copy(x, y, send, recv, right);
             g_copy_line = __LINE__; c.start();
             c.wait_send();
             c.wait_recv();
           });
         })
      .name(barrier ? "shift" : "shift_no_barrier")
      .collective_id(0)
      .compile(Mesh{{"x", n}});
}

/// Device 0 takes a fast path when device 1's signal is already there, and
/// then never tells device 2 to go: a deadlock in the orders where device
/// 1 signals before device 0 reads.
inline Executable fast_path() {
  return kernel([](In x, Out y) {
           run_scoped([&](RegularSemaphore flag, RegularSemaphore go) {
             const auto me = axis_index("x");
             when(me == 0, [&] {
               when(semaphore_read(flag) == 0, [&] { semaphore_signal(go, 1, 2); });
               semaphore_wait(flag, 1);
             });
             when(me == 1, [&] { semaphore_signal(flag, 1, 0); });
             when(me == 2, [&] { semaphore_wait(go, 1); });
             y.store(x.load());
           });
         })
      .name("fast_path")
      .passes(unverified())
      .compile(Mesh{{"x", 3}});
}

constexpr std::int64_t kSteps = 3;
/// Device 0 streams kSteps blocks to device 1 through two Vmem slots with
/// one send semaphore, and before refilling a slot waits for "a" send: it
/// assumes copies land in the order they started. When copy k-2 is late
/// and copy k-1 is not, the slot is refilled under copy k-2.
inline Executable slots() {
  return kernel([](VmemRef<const float, kSteps, kN> x, HbmRef<float, kSteps, kN> y) {
           run_scoped([&](VmemRef<float, 2, kN> slot, DmaSemaphore send, DmaSemaphore recv) {
             const auto me = axis_index("x");
             when(me == 0, [&] {
               for (std::int64_t k = 0; k < kSteps; ++k) {
                 auto c = make_async_remote_copy(slot.at(k % 2), y.at(k), send, recv, 1);
                 if (k >= 2) c.wait_send();  // meant for copy k-2; any copy's bytes satisfy it
                 slot.at(k % 2).store(x.at(k).load());
                 c.start();
               }
               auto c = make_async_remote_copy(slot.at(0), y.at(0), send, recv, 1);
               c.wait_send();
               c.wait_send();
             });
             when(me == 1, [&] {
               auto c = make_async_remote_copy(slot.at(0), y.at(0), send, recv, 1);
               for (std::int64_t k = 0; k < kSteps; ++k) c.wait_recv();
             });
           });
         })
      .name("slots")
      .passes(unverified())
      .compile(Mesh{{"x", 2}});
}

/// Every device tells its right neighbour it is done, and nobody waits for
/// it: the count is left for the neighbour's next call.
inline Executable unwaited_signal() {
  return kernel([](In x, Out y) {
           run_scoped([&](RegularSemaphore done) {
             y.store(x.load());
             const auto me = axis_index("x");
             semaphore_signal(done, 1, (me + 1) % static_cast<std::int32_t>(mesh_axis_size("x")));
           });
         })
      .name("unwaited_signal")
      .passes(unverified())
      .compile(Mesh{{"x", 3}});
}

/// Device 1 consumes device 0's signal only if it has come when it looks:
/// when it is late, it arrives after device 1 has left.
inline Executable late_signal() {
  return kernel([](In x, Out y) {
           run_scoped([&](RegularSemaphore done) {
             const auto me = axis_index("x");
             when(me == 0, [&] { semaphore_signal(done, 1, 1); });
             when(me == 1, [&] { when(semaphore_read(done) == 1, [&] { semaphore_wait(done, 1); }); });
             y.store(x.load());
           });
         })
      .name("late_signal")
      .passes(unverified())
      .compile(Mesh{{"x", 2}});
}

/// refx's ring all-gather: no barrier (at kernel entry, Pallas' device
/// barrier makes its peers' buffers free).
template <int N>
Executable ring_gather() {
  return kernel([](Shard x, HbmRef<float, N, kN> y) {
           collectives::all_gather(x, y, "x", collectives::Algorithm::ring);
         })
      .compile(Mesh{{"x", N}});
}

}  // namespace refx::testing::explore_kernels
