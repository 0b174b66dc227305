// Misuse: semaphore_read on a whole semaphore array (index it with .at(i)).
// refx-expect: refx: semaphore_read needs one semaphore; index the array with .at(i)
#include <refx/refx.hpp>

using namespace refx;

void poll() {
  trace([](SmemRef<std::int32_t> count) {
    run_scoped([&](RegularSemaphores<4> ready) { count.store(semaphore_read(ready)); });
  });
}
