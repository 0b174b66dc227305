// Misuse: an in-place all_reduce of a read-only Ref<const T>.
// refx-expect: refx: an in-place collective needs a writable Ref<T>, not Ref<const T>
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void reduce() {
  trace([](VmemRef<const float, 4, 128> x) { collectives::all_reduce(x, "x"); });
}
