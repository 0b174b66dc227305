// Misuse: a floating-point semaphore increment.
// refx-expect: refx: a floating-point number where an integer is expected
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void notify() {
  trace([](VmemRef<float, 128> y) {
    run_scoped([&](RegularSemaphore sem) {
      semaphore_signal(sem, 0.5);
      semaphore_wait(sem);
    });
  });
}
