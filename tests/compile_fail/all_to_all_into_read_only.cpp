// Misuse: all_to_all into a read-only output Ref<const T>.
// refx-expect: refx: all_to_all
// refx-expect: output must be a writable Ref<T>
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void exchange() {
  trace([](VmemRef<const float, 4, 128> x, VmemRef<const float, 4, 128> out) {
    collectives::all_to_all(x, out, "x");
  });
}
