// Misuse: collective_matmul with a non-matrix operand.
// refx-expect: refx: collective_matmul multiplies matrices
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void matvec() {
  auto exe = kernel([](VmemRef<const float, 8, 128> a, VmemRef<const float, 128> b, VmemRef<float, 32> out) {
               collectives::collective_matmul(a, b, out, "x");
             }).compile(Mesh{{"x", 4}});
  (void)exe;
}
