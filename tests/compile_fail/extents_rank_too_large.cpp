// Misuse: a Ref of rank 7 (refx supports at most 6 dimensions).
// refx-expect: refx: at most 6 dimensions are supported
#include <refx/refx.hpp>

using namespace refx;

void seven_d() {
  trace([](VmemRef<float, 2, 2, 2, 2, 2, 2, 2> x) { x.store(0.0f); });
}
