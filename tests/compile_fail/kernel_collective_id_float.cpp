// Misuse: a floating-point collective id.
// refx-expect: refx: a collective id is an integer (e.g. 0), not a floating-point number or bool
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void build() {
  auto k = kernel([](VmemRef<float, 128> y) { (void)get_barrier_semaphore(); }).collective_id(1.5);
  (void)k;
}
