// Misuse: storing a Ref (not its contents) into a Ref.
// refx-expect: refx: store / accum take a Value, not a Ref; read it with load() first
#include <refx/refx.hpp>

using namespace refx;

void copy_tile() {
  trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) { y.store(x); });
}
