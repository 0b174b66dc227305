// Misuse: a std::int64_t device id (narrowed to the 32-bit device id).
// refx-expect: refx: a device id is a 32-bit integer (std::int32_t or a Scalar<std::int32_t>); a floating-point, bool or 64-bit number would be truncated or narrowed
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void push(std::int64_t peer) {
  trace([&](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, peer);
      c.start();
      c.wait();
    });
  });
}
