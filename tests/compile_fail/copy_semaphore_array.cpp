// Misuse: completing a copy on a whole DMA semaphore array (index it with .at(i)).
// refx-expect: refx: a copy needs one DMA semaphore; index the semaphore array with .at(i)
#include <refx/refx.hpp>

using namespace refx;

void fetch_rows() {
  trace([](HbmRef<const float, 2, 128> x, VmemRef<float, 2, 128> y) {
    run_scoped([&](DmaSemaphores<2> sems) {
      auto c = make_async_copy(x, y, sems);  // needs sems.at(i) per row copy
      c.start();
      c.wait();
    });
  });
}
