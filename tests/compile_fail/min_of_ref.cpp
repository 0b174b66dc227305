// Misuse: min of a Value and a Ref (the Ref second).
// refx-expect: refx: min takes Values, not Refs; read the Ref first: min(x.load(), y)
#include <refx/refx.hpp>

using namespace refx;

void clip() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<const float, 8, 128> hi, VmemRef<float, 8, 128> y) {
    y.store(min(x.load(), hi));
  });
}
