// Misuse: a copy from a bf16 Ref into an f32 Ref (copies move bytes; they do not convert).
// refx-expect: refx: a copy's source and destination must have one element type (copies do not convert)
#include <refx/refx.hpp>

using namespace refx;

void widen() {
  trace([](HbmRef<const bf16, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore sem) {
      auto c = make_async_copy(x, y, sem);
      c.start();
      c.wait();
    });
  });
}
