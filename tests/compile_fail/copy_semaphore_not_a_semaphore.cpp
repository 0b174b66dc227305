// Misuse: passing something that is not a semaphore (a Ref) as a copy's semaphore.
// refx-expect: refx: a copy needs a DMA semaphore here
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void fetch() {
  trace([](HbmRef<const float, 128> x, VmemRef<float, 128> y, SmemRef<std::int32_t> flag) {
    auto c = make_async_copy(x, y, flag);
    c.start();
    c.wait();
  });
}
