// Misuse: dot of a bf16 and an f32 matrix (dot takes one element type).
// refx-expect: refx: dot's operands have different element types; convert one with refx::cast<T>(v)
#include <refx/refx.hpp>

using namespace refx;

void matmul() {
  trace([](VmemRef<const bf16, 8, 16> a, VmemRef<const float, 16, 8> b, VmemRef<float, 8, 8> y) {
    y.store(dot<float>(a.load(), b.load()));  // dot<float>(a.load(), cast<bf16>(b.load()))
  });
}
