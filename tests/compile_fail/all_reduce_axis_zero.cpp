// Misuse: the axis given as 0 instead of its name.
// refx-expect: refx: an axis name is a string such as "x" (the name of a mesh axis), not a number
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void sum() {
  trace([](VmemRef<float, 128> x) { collectives::all_reduce(x, 0); });
}
