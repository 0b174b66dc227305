#pragma once
// Ring all-gather along a mesh axis: out (N, block...) receives every
// device's block x in slot = its ring position. N receive slots and N-1
// receive semaphores make it race-free without a per-step handshake: each
// slot is written once, and a sender running ahead never shares a semaphore
// with the copy before it.

#include <refx/collectives/ring.hpp>
#include <refx/trace/scopes.hpp>

namespace refx::collectives {

template <class Src, class Dst>
void all_gather(const Src& x, const Dst& out, std::string_view axis,
                std::source_location loc = std::source_location::current()) {
  static_assert(is_ref_v<Src> && is_ref_v<Dst> && !is_semaphore_v<Src> && !is_semaphore_v<Dst>,
                "refx: all_gather operates on Refs");
  static_assert(Dst::rank == Src::rank + 1, "refx: all_gather's output has one more (leading) dimension than its input");
  static_assert(!Dst::read_only, "refx: all_gather's output must be a writable Ref<T>");
  const detail::Ring ring(axis, loc);
  if (out.shape()[0] != ring.size)
    throw TraceError(fmt::format("refx: all_gather: out's leading dimension is {} but the axis \"{}\" has {} devices (at {})",
                                 out.shape()[0], axis, ring.size, SourceLoc(loc)));
  const std::int64_t slots = std::max(1, ring.size - 1);
  run_scoped({Shape{}, Shape{}, Shape{}, Shape{slots}}, [&](RegularSemaphore ready, DmaSemaphore local, DmaSemaphore send,
                                                          Semaphore<SemaphoreKind::dma, extents<dyn>> recv) {
    // Entry handshake: the right neighbour's out may still be in use before this call.
    if (ring.size > 1) detail::handshake(ready, ring.peer(-1));
    const auto own = make_async_copy(x, out.at(ring.me), local, loc);
    own.start(loc);
    for (int s = 0; s < ring.size - 1; ++s) {
      const auto send_slot = ring.offset(-s), recv_slot = ring.offset(-s - 1);
      // Step 0 sends straight from x, so it need not wait for the local copy.
      if (s == 0) {
        const auto c = make_async_remote_copy(x, out.at(send_slot), send, recv.at(s), ring.peer(1), loc);
        c.start(loc);
        c.wait_send(loc);
      } else {
        const auto c = make_async_remote_copy(out.at(send_slot), out.at(send_slot), send, recv.at(s), ring.peer(1), loc);
        c.start(loc);
        c.wait_send(loc);
      }
      make_async_remote_copy(out.at(recv_slot), out.at(recv_slot), send, recv.at(s), ring.peer(1), loc).wait_recv(loc);
    }
    own.wait(loc);
  }, loc);
}

}  // namespace refx::collectives
