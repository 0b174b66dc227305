#pragma once
// All-to-all along a mesh axis: block j of x (N, block...) goes to device j,
// landing in its out slot `me`. Direct copies (no ring); one all-to-all
// barrier first, and one receive wait absorbs all N-1 incoming blocks
// (DMA semaphores count bytes).

#include <refx/collectives/ring.hpp>
#include <refx/trace/scopes.hpp>

namespace refx::collectives {

template <class Src, class Dst>
void all_to_all(const Src& x, const Dst& out, AxisName axis,
                refx::source_location loc = refx::source_location::current()) {
  if constexpr (!detail::check_collective_io<detail::Collective::all_to_all, Src, Dst>()) {
    return;
  } else {
    const detail::Ring ring(axis, loc);
    const std::int32_t n = ring.size;
    if (x.shape()[0] != n || out.shape()[0] != n)
      trace_error(loc, "all_to_all: x and out need a leading dimension of {} (the size of axis \"{}\")", n,
                  axis.view());
    run_scoped(
        [&](RegularSemaphore ready, DmaSemaphore local, DmaSemaphore send, DmaSemaphore recv) {
          detail::barrier_all(ready, ring, loc);
          const auto own = make_async_copy(x.at(ring.me), out.at(ring.me), local, loc);
          own.start(loc);
          for (std::int32_t k = 1; k < n; ++k) {
            const auto peer = ring.offset(k);
            make_async_remote_copy(x.at(peer), out.at(ring.me), send, recv, ring.at(peer), loc).start(loc);
          }
          if (n > 1) {  // n-1 blocks arrive and n-1 leave: one wait sized for all of them on each side
            const auto all =
                make_async_remote_copy(x.at(ds(0, n - 1)), out.at(ds(0, n - 1)), send, recv, ring.peer(0), loc);
            all.wait_recv(loc);
            all.wait_send(loc);
          }
          own.wait(loc);
        },
        loc);
  }
}

}  // namespace refx::collectives
