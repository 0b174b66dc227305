// Misuse: `y = value` meant as a store (a Ref is a handle; this would not write
// its memory).
// refx-expect: refx: `ref = value` does not write a Ref's memory (a Ref is a handle); write ref.store(value)
#include <refx/refx.hpp>

using namespace refx;

void twice() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) { y = x.load() * 2.0f; });
}
