// Misuse: the send and receive semaphores of a remote copy given to the local
// make_async_copy (pltpu.make_async_copy vs make_async_remote_copy).
// refx-expect: refx: make_async_copy takes one DMA semaphore: make_async_copy(src, dst, sem); a copy to another device
// with a send and a receive semaphore is make_async_remote_copy(src, dst, send_sem, recv_sem, device)
#include <refx/refx.hpp>

using namespace refx;

void push_to_neighbour() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y) {
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_copy(x, y, send, recv);
      c.start();
      c.wait();
    });
  });
}
