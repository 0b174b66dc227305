// Misuse: all_gather into an output whose blocks have other extents.
// refx-expect: refx: all_gather's output (N, block...) must hold blocks of the input's extents
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void gather() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 4, 64> out) { collectives::all_gather(x, out, "x"); });
}
