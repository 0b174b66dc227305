// Misuse: compute writing an Hbm Ref directly (Hbm is reachable by copies only).
// refx-expect: refx: compute cannot write an Hbm Ref; write a Vmem Ref and copy it
#include <refx/refx.hpp>

using namespace refx;

void relu() {
  trace([](VmemRef<const float, 1024> x, HbmRef<float, 1024> y) {
    y.store(max(x.load(), 0.0f));
  });
}
