// Misuse: a floating-point device id for a remote copy (it would be truncated).
// refx-expect: refx: a device id is a 32-bit integer (std::int32_t or a Scalar<std::int32_t>); a floating-point, bool
// or unsigned 64-bit number would be truncated or may not fit
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void push() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, 1.5);
      c.start();
      c.wait();
    });
  });
}
