// Misuse: all_reduce into an output of another element type.
// refx-expect: refx: all_reduce's output must have its input's element type
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void sum() {
  trace([](VmemRef<const float, 128> x, VmemRef<double, 128> out) { collectives::all_reduce(x, out, "x"); });
}
