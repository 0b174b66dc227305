// Misuse: collective_matmul into a read-only output.
// refx-expect: refx: collective_matmul's output must be a writable Ref<T>, not Ref<const T>
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void mm() {
  trace([](VmemRef<const float, 8, 16> a, VmemRef<const float, 16, 8> b, VmemRef<const float, 32, 8> c) {
    collectives::collective_matmul(a, b, c, "x");
  });
}
