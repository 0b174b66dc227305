// Misuse: a floating-point semaphore wait count.
// refx-expect: refx: a floating-point number where an integer is expected
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void notify() {
  trace([](VmemRef<float, 128> y) {
    run_scoped([&](RegularSemaphore sem) {
      semaphore_signal(sem, 2);
      semaphore_wait(sem, 2.0);
    });
  });
}
