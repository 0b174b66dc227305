// Misuse: all_gather into an output of another element type.
// refx-expect: refx: all_gather's output must have its input's element type (collectives do not convert)
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void gather() {
  trace([](VmemRef<const float, 128> x, VmemRef<std::int32_t, 4, 128> out) { collectives::all_gather(x, out, "x"); });
}
