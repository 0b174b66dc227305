#pragma once
// Ring and direct all-gather along a mesh axis: out (N, block...) receives
// every device's block x in slot = its ring position; in place, the block is
// in that slot already. The ring's N receive slots and N-1 receive semaphores
// make it race-free without a per-step handshake: each slot is written once,
// and a sender running ahead never shares a semaphore with the copy before it.

#include <refx/collectives/ring.hpp>
#include <refx/trace/scopes.hpp>

namespace refx::collectives {

/// all_gather's Algorithm::automatic uses the direct algorithm while the
/// gathered output is at most this many bytes per device, the ring above
/// (direct was ahead up to 16 MiB at N = 4 and 8; at 64 MiB neither was
/// ahead throughout: docs/notes/performance-history.md, bb3b852).
inline constexpr std::int64_t all_gather_direct_max_bytes = 16 << 20;

}  // namespace refx::collectives

namespace refx::detail {

// Both algorithms take this device's block as `x`, or null in place (the
// block is in out's slot `me` already): then there is no local copy and every
// send reads out.

/// Ring all-gather: N-1 steps, each forwarding the block received last.
template <class Src, class Dst>
void all_gather_ring(const Src* x, const Dst& out, const Ring& ring, refx::source_location loc) {
  const std::int64_t slots = std::max(1, ring.size - 1);
  run_scoped(
      {Shape{}, Shape{}, Shape{}, Shape{slots}},
      [&](RegularSemaphore ready, DmaSemaphore local, DmaSemaphore send,
          Semaphore<SemaphoreKind::dma, extents<dyn>> recv) {
        // Entry handshake: the right neighbour's out may still be in use before this call.
        if (ring.size > 1 && !ring.entry) handshake(ready, ring.peer(-1));
        const auto own = [&](const auto& src) { return make_async_copy(src, out.at(ring.me), local, loc); };
        for (int s = 0; s < ring.size - 1; ++s) {
          const auto send_slot = ring.offset(-s), recv_slot = ring.offset(-s - 1);
          const auto send_from = [&](const auto& src) {
            const auto c = make_async_remote_copy(src, out.at(send_slot), send, recv.at(s), ring.peer(1), loc);
            c.start(loc);
            // The local copy of x goes while the first block is on its way (step 0
            // sends straight from x, so it need not wait for the local copy).
            if (s == 0 && x) own(*x).start(loc);
            c.wait_send(loc);
          };
          if (s == 0 && x) send_from(*x);
          else send_from(out.at(send_slot));
          make_async_remote_copy(out.at(recv_slot), out.at(recv_slot), send, recv.at(s), ring.peer(1), loc)
              .wait_recv(loc);
        }
        if (x && ring.size == 1) own(*x).start(loc);
        if (x) own(*x).wait(loc);
      },
      loc);
}

/// Direct all-gather: after an all-device barrier (every out is free), this
/// device's block goes straight to slot `me` of every device; one receive
/// wait covers the N-1 blocks that arrive.
template <class Src, class Dst>
void all_gather_direct(const Src* x, const Dst& out, const Ring& ring, refx::source_location loc) {
  const std::int32_t n = ring.size;
  run_scoped(
      {Shape{}, Shape{}, Shape{}, Shape{}},
      [&](RegularSemaphore ready, DmaSemaphore local, DmaSemaphore send, DmaSemaphore recv) {
        barrier_all(ready, ring, loc);
        const auto mine = out.at(ring.me);
        const auto send_all = [&](const auto& src) {
          for (std::int32_t k = 1; k < n; ++k)
            make_async_remote_copy(src, mine, send, recv, ring.peer(k), loc).start(loc);
        };
        if (x) send_all(*x);
        else send_all(mine);
        // The local copy goes while the blocks to the others are on their way.
        if (x) make_async_copy(*x, mine, local, loc).start(loc);
        // DMA semaphores count bytes: one wait sized for N-1 blocks takes all the
        // blocks that arrive, and one more all the blocks this device sent.
        const auto blocks = out.at(ds(0, n - 1));
        const auto all = make_async_remote_copy(blocks, blocks, send, recv, ring.peer(0), loc);
        all.wait_recv(loc);
        all.wait_send(loc);
        if (x) make_async_copy(*x, mine, local, loc).wait(loc);
      },
      loc);
}

/// Checks out (N, block...) and picks the algorithm; runs it.
template <class Src, class Dst>
void all_gather(const Src* x, const Dst& out, AxisName axis, collectives::Algorithm a, refx::source_location loc) {
  static_assert(is_ref_v<Dst> && !is_semaphore_v<Dst>, "refx: all_gather operates on Refs");
  static_assert(!Dst::read_only, "refx: all_gather's output must be a writable Ref<T>");
  const Ring ring(axis, loc);
  const std::int64_t slots = out.shape()[0];
  if (slots != ring.size && x)
    trace_error(loc, "all_gather: out's leading dimension is {} but the axis \"{}\" has {} devices", slots, axis.view(),
                ring.size);
  if (slots != ring.size)
    trace_error(loc, "all_gather_in_place: x's leading dimension is {} but the axis \"{}\" has {} devices", slots,
                axis.view(), ring.size);
  if (collectives::all_reduce_only(a))
    trace_error(loc, "all_gather: Algorithm::{} is an all_reduce algorithm; use ring, direct or automatic",
                collectives::algorithm_name(a));
  const std::int64_t bytes = out.shape().num_elements() * static_cast<std::int64_t>(sizeof(typename Dst::value_type));
  if (ring.size > 1 && (a == collectives::Algorithm::direct ||
                        (a == collectives::Algorithm::automatic && bytes <= collectives::all_gather_direct_max_bytes)))
    all_gather_direct(x, out, ring, loc);
  else all_gather_ring(x, out, ring, loc);
}

}  // namespace refx::detail

namespace refx::collectives {

/// Gathers every device's x into out (N, block...): slot j of out receives
/// device j's x (j = its position along `axis`). Algorithm::automatic: direct
/// up to `all_gather_direct_max_bytes` of output per device, else the ring.
template <class Src, class Dst>
void all_gather(const Src& x, const Dst& out, AxisName axis, Algorithm a = Algorithm::automatic,
                refx::source_location loc = refx::source_location::current()) {
  if constexpr (!detail::check_collective_io<detail::Collective::all_gather, Src, Dst>()) {
    return;
  } else {
    detail::all_gather(&x, out, axis, a, loc);
  }
}

/// In-place all-gather (MPI_IN_PLACE's convention): x (N, block...) holds this
/// device's block in slot `me` on entry; afterwards slot j holds device j's
/// block. No local copy: (N-1) blocks move per device, against N out of place.
template <class R>
void all_gather_in_place(const R& x, AxisName axis, Algorithm a = Algorithm::automatic,
                         refx::source_location loc = refx::source_location::current()) {
  if constexpr (!(detail::check_in_place_ref<R>())) {
    return;
  } else {
    using Slot = decltype(x.at(std::declval<Scalar<std::int32_t>>()));
    detail::all_gather<Slot>(nullptr, x, axis, a, loc);
  }
}

}  // namespace refx::collectives
