// Misuse: storing an f32 Value into a bf16 Ref (a rounding the user did not ask for).
// refx-expect: refx: the stored Value's element type differs from the Ref's (no implicit narrowing); convert it with refx::cast<T>(value)
#include <refx/refx.hpp>

using namespace refx;

void narrow() {
  trace([](VmemRef<const float, 128> x, VmemRef<bf16, 128> y) { y.store(x.load() * 2.0f); });
}
