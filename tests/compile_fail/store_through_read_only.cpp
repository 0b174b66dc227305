// Misuse: writing through a read-only Ref. A Ref<const T> may only be read;
// store() on it must not compile.
// refx-expect: refx: cannot write through a read-only Ref<const T>; take a Ref<T> to write
#include <refx/refx.hpp>

using namespace refx;

void scale_in_place() {
  // `x` is declared read-only, yet the kernel tries to overwrite it.
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y) {
    auto v = x.load();
    y.store(v * 2.0f);
    x.store(v * 2.0f);
  });
}
