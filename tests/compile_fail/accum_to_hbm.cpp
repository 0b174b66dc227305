// Misuse: accumulating (+=) into an Hbm Ref from compute.
// refx-expect: refx: compute cannot write an Hbm Ref; write a Vmem Ref and copy it
#include <refx/refx.hpp>

using namespace refx;

void add_into_output() {
  trace([](VmemRef<const float, 1024> x, HbmRef<float, 1024> y) {
    y += x.load();
  });
}
