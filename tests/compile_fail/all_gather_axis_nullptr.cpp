// Misuse: nullptr as the axis of all_gather.
// refx-expect: refx: an axis name is a string such as "x" (the name of a mesh axis), not nullptr
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void gather() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 4, 128> out) { collectives::all_gather(x, out, nullptr); });
}
