// Misuse: a run_scoped body parameter that is a Value (scopes allocate Refs
// and semaphores, not Values).
// refx-expect: refx: every kernel / run_scoped parameter must be a Ref<...> or a semaphore handle
#include <refx/refx.hpp>

using namespace refx;

void scratch() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](Value<float, extents<128>> tmp) { y.store(tmp + x.load()); });
  });
}
