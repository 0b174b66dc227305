// Misuse: a kernel parameter that is neither a Ref nor a semaphore handle
// (here a plain float; pass it in a SmemRef instead).
// refx-expect: refx: every kernel / run_scoped parameter must be a Ref<...> or a semaphore handle
#include <refx/refx.hpp>

using namespace refx;

void axpy() {
  trace([](float alpha, VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    y.store(x.load() * alpha + y.load());
  });
}
