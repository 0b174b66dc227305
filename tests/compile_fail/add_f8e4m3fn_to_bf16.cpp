// Misuse: adding an f8e4m3fn Value and a bf16 Value. refx does not promote
// (JAX would give bf16): the user says which type the sum is computed in.
// refx-expect: refx: both operands of an arithmetic op must have one element type; convert one with refx::cast<T>(v)
#include <refx/refx.hpp>

using namespace refx;

void mixed() {
  trace([](VmemRef<const f8e4m3fn, 128> x, VmemRef<const bf16, 128> s, VmemRef<bf16, 128> y) {
    y.store(x.load() + s.load());  // cast<bf16>(x.load()) + s.load()
  });
}
