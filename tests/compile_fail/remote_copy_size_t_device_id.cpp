// Misuse: a std::size_t device id, the index of a host-side loop over peers
// (an unsigned 64-bit number may not fit a signed 32-bit id; a std::int64_t
// one converts and is checked while tracing).
// refx-expect: refx: a device id is a 32-bit integer (std::int32_t or a Scalar<std::int32_t>); a floating-point, bool
// or unsigned 64-bit number would be truncated or may not fit
#include <cstddef>
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void push(std::size_t peer) {
  trace([&](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, peer);
      c.start();
      c.wait();
    });
  });
}
