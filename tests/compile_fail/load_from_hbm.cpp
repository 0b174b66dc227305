// Misuse: compute reading an Hbm Ref directly (Hbm is reachable by copies only).
// refx-expect: refx: compute cannot read an Hbm Ref; copy it to Vmem first
#include <refx/refx.hpp>

using namespace refx;

void relu() {
  trace([](HbmRef<const float, 1024> x, VmemRef<float, 1024> y) {
    auto v = x.load();
    y.store(max(v, 0.0f));
  });
}
