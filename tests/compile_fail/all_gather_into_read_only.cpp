// Misuse: all_gather into a read-only output Ref<const T>.
// refx-expect: refx: all_gather
// refx-expect: output must be a writable Ref<T>
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void gather() {
  trace([](VmemRef<const float, 128> x, VmemRef<const float, 4, 128> out) {
    collectives::all_gather(x, out, "x");
  });
}
