// Misuse: run_scoped given a Ref instead of a body.
// refx-expect: refx: run_scoped takes a body
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void scratch() {
  trace([](VmemRef<float, 128> y) { run_scoped(y); });
}
