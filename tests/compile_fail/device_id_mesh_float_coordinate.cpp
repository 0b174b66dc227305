// Misuse: a floating-point coordinate in DeviceId::mesh.
// refx-expect: refx: a floating-point number where an integer is expected (a device id, loop bound, semaphore count or increment, step or index) would be truncated
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void push() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, DeviceId::mesh({0, 0.5}));
      c.start();
      c.wait();
    });
  });
}
