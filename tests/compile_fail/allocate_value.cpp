// Misuse: allocate<H>() of something that is neither a Ref nor a semaphore handle.
// refx-expect: refx: allocate makes a Ref<...> or a semaphore handle
#include <refx/refx.hpp>

using namespace refx;

void keep_state() {
  trace([](VmemRef<float, 128> y) {
    auto acc = allocate<Value<float, extents<128>>>();
    y.store(acc);
  });
}
