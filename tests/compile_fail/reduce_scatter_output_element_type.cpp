// Misuse: reduce_scatter into an output of another element type.
// refx-expect: refx: reduce_scatter's output must have its input's element type
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void scatter() {
  trace([](VmemRef<const float, 4, 128> x, VmemRef<double, 128> out) { collectives::reduce_scatter(x, out, "x"); });
}
