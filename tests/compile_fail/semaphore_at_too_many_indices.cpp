// Misuse: more indices than a semaphore array's rank in .at(...).
// refx-expect: refx: more indices than the semaphore array
// refx-expect: rank in .at(...)
#include <refx/refx.hpp>

using namespace refx;

void ring() {
  trace([](VmemRef<float, 128> y) {
    run_scoped([&](RegularSemaphores<4> sems) {
      semaphore_signal(sems.at(0, 1));  // a rank-1 array
      y.store(0.0f);
    });
  });
}
