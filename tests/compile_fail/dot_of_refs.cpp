// Misuse: dot of Refs.
// refx-expect: refx: dot multiplies Values, not Refs
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void matmul() {
  trace([](VmemRef<const float, 8, 16> a, VmemRef<const float, 16, 8> b, VmemRef<float, 8, 8> c) { c.store(dot(a, b)); });
}
