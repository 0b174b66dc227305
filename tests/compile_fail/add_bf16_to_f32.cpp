// Misuse: adding a bf16 Value and an f32 Value (no implicit promotion, unlike
// JAX's bf16 + f32 -> f32): the user says which type the sum is computed in.
// refx-expect: refx: both operands of an arithmetic op must have one element type; convert one with refx::cast<T>(v)
#include <refx/refx.hpp>

using namespace refx;

void mixed() {
  trace([](VmemRef<const bf16, 128> x, VmemRef<const float, 128> s, VmemRef<float, 128> y) {
    y.store(x.load() + s.load());
  });
}
