// Misuse: the device id before the semaphores in make_async_remote_copy.
// refx-expect: refx: a copy needs a DMA semaphore here
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void push() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, 1, send, recv);
      c.start();
      c.wait();
    });
  });
}
