// Misuse: storing a rank-2 Value into a rank-1 Ref view (no implicit reshape).
// refx-expect: rank differs from the Ref view
#include <refx/refx.hpp>

using namespace refx;

void flatten() {
  trace([](VmemRef<const float, 4, 8> x, VmemRef<float, 32> y) {
    y.store(x.load());
  });
}
