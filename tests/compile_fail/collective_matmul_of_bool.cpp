// Misuse: a collective matmul of bool matrices.
// refx-expect: refx: collective_matmul multiplies numbers; a bool matrix has no product
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void multiply() {
  trace([](VmemRef<const bool, 2, 3> a, VmemRef<const bool, 3, 2> b, VmemRef<bool, 8, 2> out) {
    collectives::collective_matmul(a, b, out, "x");
  });
}
