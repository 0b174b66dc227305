// Misuse: `x *= 2` on an input block (Pallas refs are all writable; a
// refx in(...) block or Ref<const T> parameter is read-only).
// refx-expect: refx: cannot write through a read-only Ref<const T>; take a Ref<T> to write
#include <refx/refx.hpp>

using namespace refx;

void scale() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    x *= 2.0f;
    y.store(x.load());
  });
}
