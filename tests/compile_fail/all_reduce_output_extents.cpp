// Misuse: all_reduce into an output of other extents.
// refx-expect: refx: all_reduce's output must have its input's extents
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void sum() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 64> out) { collectives::all_reduce(x, out, "x"); });
}
