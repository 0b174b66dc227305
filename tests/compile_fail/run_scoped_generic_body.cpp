// Misuse: a generic (auto) run_scoped body: run_scoped allocates the body's
// parameters from their declared types, so they must be spelled out.
// refx-expect: refx: run_scoped needs a body with explicit parameter types (Ref<...>, semaphores), not auto
#include <refx/refx.hpp>

using namespace refx;

void scratch() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    run_scoped([&](auto tmp) {
      tmp.store(x.load());
      y.store(tmp.load());
    });
  });
}
