// Misuse: a preferred element type narrower than the operands (JAX rejects it too).
// refx-expect: refx: dot's preferred element type must be at least as wide as the operands
#include <refx/refx.hpp>

using namespace refx;

void matmul() {
  trace([](VmemRef<const float, 8, 16> a, VmemRef<const float, 16, 8> b, VmemRef<bf16, 8, 8> y) {
    y.store(dot<bf16>(a.load(), b.load()));  // cast the f32 result instead: cast<bf16>(dot(a, b))
  });
}
