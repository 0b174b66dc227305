// Misuse: a core_map body that does not take the core index.
// refx-expect: refx: core_map's body takes the core index: core_map([&](std::int32_t core) { ... }), run on every core of the device
#include <refx/refx.hpp>

using namespace refx;

void per_core() {
  trace([](HbmRef<float, 8> y) {
    (void)y;
    // Pallas' core_map body reads its core with lax.axis_index; refx passes it.
    core_map([&] { core_barrier(); });
  });
}
