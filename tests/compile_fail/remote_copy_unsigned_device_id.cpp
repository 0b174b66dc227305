// Misuse: an unsigned 32-bit device id for a remote copy (a value above
// 2^31 - 1 would become a negative id).
// refx-expect: refx: a device id is a signed 32-bit integer (std::int32_t or a Scalar<std::int32_t>); an unsigned 32-bit one may not fit
#include <refx/refx.hpp>

using namespace refx;

void push(unsigned peer) {
  trace([&](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
      auto c = make_async_remote_copy(x, y, send, recv, peer);
      c.start();
      c.wait();
    });
  });
}
