#pragma once
// The ring kernel that the compile-time TUs (ring_kernel.cpp, own_runtime.cpp)
// define: a handshake, a remote copy to the right neighbour, then compute on
// a scoped buffer.
#include <refx/refx.hpp>

inline auto ring_kernel() {
  using namespace refx;
  return kernel([](HbmRef<const float, 4096> x, HbmRef<float, 4096> y) {
    auto me = axis_index("x"), n = axis_size("x");
    run_scoped([&](VmemRef<float, 4096> buf, RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
      semaphore_signal(ready, 1, (me + n - 1) % n);
      semaphore_wait(ready, 1);
      auto c = make_async_remote_copy(x, y, send, recv, (me + 1) % n);
      c.start();
      c.wait();
      sync_copy(y, buf);
      buf.store(buf.load() * 2.0f + 1.0f);
      sync_copy(buf, y);
    });
  });
}
