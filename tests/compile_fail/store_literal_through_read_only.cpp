// Misuse: storing a scalar literal (broadcast) into a read-only Ref<const T>.
// refx-expect: refx: cannot write through a read-only Ref<const T>; take a Ref<T> to write
#include <refx/refx.hpp>

using namespace refx;

void zero_fill() {
  trace([](VmemRef<const float, 16, 128> acc) {
    acc.at(ds(0, 8), all).store(0.0f);
  });
}
