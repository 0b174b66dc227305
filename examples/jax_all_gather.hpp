#pragma once
// jax-ml/jax's pedagogical all-gather (jax/experimental/pallas/ops/tpu/
// all_gather.py), ported line for line: every device splits its shard in
// two and sends one half around the ring to the right, the other to the
// left, forwarding what it received the step before, until every device
// holds every shard. The Python's names are kept: ag_kernel, get_neighbor,
// my_id, right_dma / left_dma, send_sem / recv_sem, and its named scopes
// appear as comments where it opens them.
//
//   Pallas                                   refx
//   pl.pallas_call(ag_kernel, grid_spec=     kernel(ag_kernel<...>).collective_id(0)
//     PrefetchScalarGridSpec(scratch_shapes= run_scoped([&](DmaSemaphores<2> send_sem,
//       (DMA, DMA), (DMA, DMA)), in/out       DmaSemaphores<2> recv_sem) { ... }); the
//       memory_space=VMEM or ANY)            operands are Hbm Refs (pl.ANY)
//   lax.psum(1, axis_name)                   mesh_axis_size("x"), a C++ integer
//   pltpu.async_copy(...).wait()             async_copy(...).wait()
//   pltpu.async_remote_copy(...)             async_remote_copy(...)
//   right_dma = None ... if right_dma:       std::optional<...> right_dma
//
// The Python is 5541 characters with its license and docstrings; this
// header's kernel is about half of that, its comments included.

#include <cstdint>
#include <optional>

#include <refx/refx.hpp>

namespace jax_all_gather {
using namespace refx;

/// get_neighbor on a one-axis mesh: the device to the left or the right of
/// `idx` on the ring.
inline Scalar<std::int32_t> get_neighbor(const Scalar<std::int32_t>& idx, std::int64_t axis_size, bool right) {
  if (right) return (idx + 1) % static_cast<std::int32_t>(axis_size);  // lax.rem(idx + 1, axis_size)
  const auto left = idx - 1;
  return select(left < 0, left + static_cast<std::int32_t>(axis_size), left);  // jnp.where
}

/// ag_kernel(x_ref, o_ref, send_sem, recv_sem): x is this device's shard
/// (kShard rows), o every device's, shard by shard.
template <class T, std::int64_t kDevices, std::int64_t kShard, std::int64_t kCols>
void ag_kernel(HbmRef<const T, kShard, kCols> x_ref, HbmRef<T, kDevices, kShard, kCols> o_ref) {
  run_scoped([&](DmaSemaphores<2> send_sem, DmaSemaphores<2> recv_sem) {
    const auto my_id = axis_index("x");
    // initial_copy
    async_copy(x_ref, o_ref.at(my_id), recv_sem.at(0)).wait();

    // neighbour_lookup
    const std::int64_t axis_size = mesh_axis_size("x");
    const auto left_neighbor = get_neighbor(my_id, axis_size, false);
    const auto right_neighbor = get_neighbor(my_id, axis_size, true);

    // main_barrier: no device writes into a neighbour that has not entered.
    const BarrierSemaphore sem = get_barrier_semaphore();
    semaphore_signal(sem, 1, left_neighbor);
    semaphore_signal(sem, 1, right_neighbor);
    semaphore_wait(sem, 2);

    constexpr std::int64_t shard_size = kShard;
    std::optional<AsyncRemoteCopy> right_dma, left_dma;
    // Carve the shard into two halves; send each around the ring one way.
    for (std::int64_t i = 0; i < axis_size - 1; ++i) {
      const auto right_slot = my_id - static_cast<std::int32_t>(i);
      const auto right_slice = ds<shard_size / 2>(shard_size / 2);
      auto slot = select(right_slot < 0, static_cast<std::int32_t>(axis_size) + right_slot, right_slot);
      if (right_dma) right_dma->wait();  // wait_right_dma
      right_dma = async_remote_copy(o_ref.at(slot, right_slice), o_ref.at(slot, right_slice), send_sem.at(1),
                                    recv_sem.at(1), right_neighbor);

      const auto left_slot = my_id + static_cast<std::int32_t>(i);
      const auto left_slice = ds<shard_size / 2>(0);
      slot = left_slot % static_cast<std::int32_t>(axis_size);  // lax.rem
      if (left_dma) left_dma->wait();  // wait_left_dma
      left_dma = async_remote_copy(o_ref.at(slot, left_slice), o_ref.at(slot, left_slice), send_sem.at(0),
                                   recv_sem.at(0), left_neighbor);
    }
    // wait_all_dma
    right_dma->wait();
    left_dma->wait();
  });
}

/// all_gather: the kernel for a mesh of kDevices devices on axis "x"
/// (pallas_call with collective_id=0 for the barrier semaphore).
template <class T, std::int64_t kDevices, std::int64_t kShard, std::int64_t kCols, class... Rt>
Executable all_gather(const Mesh& mesh, Rt&... rt) {
  return kernel(ag_kernel<T, kDevices, kShard, kCols>).name("all_gather").collective_id(0).compile(mesh, {}, rt...);
}
}  // namespace jax_all_gather
