// Misuse: select_ref with one Ref (Pallas: "At least two refs are required").
// refx-expect: refx: select_ref needs at least two Refs to choose from
#include <refx/refx.hpp>

using namespace refx;

void pick() {
  trace([](HbmRef<const float, 128> a, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore sem) { async_copy(select_ref(0, a), y, sem).wait(); });
  });
}
