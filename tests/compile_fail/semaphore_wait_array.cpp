// Misuse: semaphore_wait on a whole semaphore array (index it with .at(i)).
// refx-expect: refx: semaphore_wait needs one semaphore; index the array with .at(i)
#include <refx/refx.hpp>

using namespace refx;

void wait_all() {
  trace([](VmemRef<float, 128> y) {
    run_scoped([&](RegularSemaphores<4> ready) {
      semaphore_wait(ready, 4);
      y.store(0.0f);
    });
  });
}
