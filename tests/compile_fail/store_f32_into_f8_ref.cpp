// Misuse: storing an f32 Value into an f8e4m3fn Ref (a rounding, and above
// 464 a NaN, that the user did not ask for).
// refx-expect: refx: the stored Value's element type differs from the Ref's (no implicit narrowing); convert it with
// refx::cast<T>(value)
#include <refx/refx.hpp>

using namespace refx;

void quantise() {
  trace([](VmemRef<const float, 128> x, VmemRef<f8e4m3fn, 128> y) { y.store(x.load() * 0.5f); });
}
