// Misuse: select_ref among Refs of different element types.
// refx-expect: refx: select_ref's Refs must have one element type (and constness), rank and memory space
#include <refx/refx.hpp>

using namespace refx;

void pick() {
  trace([](HbmRef<const float, 128> a, HbmRef<const std::int32_t, 128> b, VmemRef<float, 128> y) {
    run_scoped([&](DmaSemaphore sem) { async_copy(select_ref(axis_index("x"), a, b), y, sem).wait(); });
  });
}
