// Misuse: a semaphore where make_async_remote_copy's target device goes.
// refx-expect: refx: a remote copy's last argument is the target device: an integer, a Scalar<std::int32_t> or a DeviceId
#include <refx/refx.hpp>

using namespace refx;

void push() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv, DmaSemaphore extra) {
      auto c = make_async_remote_copy(x, y, send, recv, extra);
      c.start();
      c.wait();
    });
  });
}
