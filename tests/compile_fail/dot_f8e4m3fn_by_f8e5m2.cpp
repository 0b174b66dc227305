// Misuse: dot of an f8e4m3fn and an f8e5m2 matrix (the two fp8 formats of a
// training step's forward and backward pass): dot takes one element type.
// refx-expect: refx: dot's operands have different element types; convert one with refx::cast<T>(v)
#include <refx/refx.hpp>

using namespace refx;

void matmul() {
  trace([](VmemRef<const f8e4m3fn, 8, 16> a, VmemRef<const f8e5m2, 16, 8> g, VmemRef<float, 8, 8> y) {
    y.store(dot<float>(a.load(), g.load()));  // dot<float>(cast<bf16>(a.load()), cast<bf16>(g.load()))
  });
}
