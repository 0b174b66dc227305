// Misuse: exp of a Ref (load it first).
// refx-expect: refx: exp takes a Value, not a Ref; read the Ref first: exp(x.load())
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void softmax() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) { y.store(exp(x)); });
}
