// Misuse: a copy completing on the BARRIER semaphore.
// refx-expect: refx: copies need a DMA semaphore; the BARRIER semaphore (get_barrier_semaphore) only synchronises devices
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void fetch() {
  trace([](HbmRef<const float, 128> x, VmemRef<float, 128> y) {
    auto c = make_async_copy(x, y, get_barrier_semaphore(0));
    c.start();
    c.wait();
  });
}
