// Misuse: accumulating (+=) into a read-only Ref<const T>.
// refx-expect: refx: cannot write through a read-only Ref<const T>; take a Ref<T> to write
#include <refx/refx.hpp>

using namespace refx;

void accumulate_rows() {
  // The bias is read-only input; adding into it is a write.
  trace([](VmemRef<const float, 8, 128> x, VmemRef<const float, 128> bias) {
    for (int r = 0; r < 8; ++r) bias += x.at(r, all).load();
  });
}
