// Misuse: a collective matmul of a bf16 a and an f32 b (out may be wider
// than a and b, but a and b share one element type).
// refx-expect: refx: collective_matmul: a and b must have one element type; cast one of them first
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void multiply() {
  trace([](VmemRef<const bf16, 2, 3> a, VmemRef<const float, 3, 2> b, VmemRef<float, 8, 2> out) {
    collectives::collective_matmul(a, b, out, "x");
  });
}
