// Misuse: semaphore_signal on a whole semaphore array (index it with .at(i)).
// refx-expect: refx: semaphore_signal needs one semaphore; index the array with .at(i)
#include <refx/refx.hpp>

using namespace refx;

void notify_all() {
  trace([](VmemRef<float, 128> y) {
    run_scoped([&](RegularSemaphores<4> ready) {
      y.store(0.0f);
      semaphore_signal(ready);
    });
  });
}
