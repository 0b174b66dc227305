// Misuse: dot of bool matrices.
// refx-expect: refx: dot cannot multiply bool matrices; cast them to a number type first
#include <refx/refx.hpp>

using namespace refx;

void matmul() {
  trace([](VmemRef<const float, 4, 4> a, VmemRef<float, 4, 4> y) {
    auto p = a.load() > 0.0f;
    y.store(cast<float>(dot(p, p)));
  });
}
