// Misuse: wait_send on a local copy (only remote copies have a send semaphore).
// refx-expect: refx: wait_send is for remote copies; a local copy has no send semaphore, use wait()
#include <refx/refx.hpp>

using namespace refx;

void fetch() {
  trace([](HbmRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start();
      c.wait_send();
    });
  });
}
