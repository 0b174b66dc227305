// Misuse: a floating-point collective id for get_barrier_semaphore.
// refx-expect: refx: a collective id is an integer (e.g. 0), not a floating-point number or bool
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void sync() {
  trace([](VmemRef<float, 128> y) {
    auto b = get_barrier_semaphore(0.5);
    semaphore_signal(b);
    semaphore_wait(b);
  });
}
