// Misuse: dot of an (m, k) and a (k', n) Value with k != k'.
// refx-expect: refx: dot
// refx-expect: contracting extents differ
#include <refx/refx.hpp>

using namespace refx;

void matmul() {
  trace([](VmemRef<const float, 8, 128> a, VmemRef<const float, 8, 64> b, VmemRef<float, 8, 64> y) {
    y.store(dot(a.load(), b.load()));  // b must be (128, 64)
  });
}
