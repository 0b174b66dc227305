// Misuse: more indices in .at(...) than the Ref has dimensions.
// refx-expect: refx: more indices than the Ref
// refx-expect: rank in .at(...)
#include <refx/refx.hpp>

using namespace refx;

void pick_element() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 128> y) {
    y.store(x.at(0, all, 3).load());  // x is rank 2: three indices
  });
}
