// Misuse: an out-of-place all_reduce into a read-only output Ref<const T>.
// refx-expect: refx: all_reduce's output must be a writable Ref<T>
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void reduce() {
  trace([](VmemRef<const float, 4, 128> x, VmemRef<const float, 4, 128> out) { collectives::all_reduce(x, out, "x"); });
}
