// Misuse: reduce_scatter into a read-only output.
// refx-expect: refx: reduce_scatter's output must be a writable Ref<T>, not Ref<const T>
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void scatter() {
  trace([](VmemRef<const float, 4, 128> x, VmemRef<const float, 128> out) { collectives::reduce_scatter(x, out, "x"); });
}
