// Misuse: when(cond, ref): a Ref given as when's body.
// refx-expect: refx: when's body is a callable taking no arguments
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void first_only() {
  trace([](VmemRef<float, 128> y) { when(axis_index("x") == 0, y); });
}
