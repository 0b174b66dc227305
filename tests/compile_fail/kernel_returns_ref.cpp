// Misuse: a kernel that returns one of its Refs.
// refx-expect: refx: a kernel must not return a Ref; write results into its output Refs
#include <refx/refx.hpp>

using namespace refx;

void square() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    y.store(x.load() * x.load());
    return y;
  });
}
