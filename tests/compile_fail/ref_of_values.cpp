// Misuse: a Ref whose element type is a Value.
// refx-expect: refx: a Ref holds elements, not Values
// refx-max-tail: 180  (a known cascade, 171 lines with the worse of g++ 12 / clang 15; issue 25)
#include <refx/refx.hpp>

using namespace refx;

void stash() {
  trace([](Ref<Value<float, extents<8>>, extents<4>> stash, VmemRef<float, 8> out) {
    out.store(0.0f);
    (void)stash;
  });
}
