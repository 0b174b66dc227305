// Misuse: a Ref whose element type is a Value.
// refx-expect: refx: a Ref holds elements, not Values
#include <refx/refx.hpp>

using namespace refx;

void stash() {
  trace([](Ref<Value<float, extents<8>>, extents<4>> stash, VmemRef<float, 8> out) {
    out.store(0.0f);
    (void)stash;
  });
}
