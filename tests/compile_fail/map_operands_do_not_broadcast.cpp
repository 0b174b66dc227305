// Misuse: map over a block and its transpose's shape (a <4, 8> block and a
// <8, 4> one): map's operands broadcast as the operators' do.
// refx-expect: refx: map's operands do not broadcast to one shape
#include <refx/refx.hpp>

using namespace refx;

void add() {
  trace([](VmemRef<const float, 4, 8> x, VmemRef<const float, 8, 4> y, VmemRef<float, 4, 8> z) {
    z.store(map([](float a, float b) { return a + b; }, x.load(), y.load()));
  });
}
