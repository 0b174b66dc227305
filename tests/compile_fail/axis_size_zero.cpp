// Misuse: 0 as an axis name (axis positions are not names).
// refx-expect: refx: an axis name is a string such as "x" (the name of a mesh axis), not a number
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void how_many() {
  trace([](SmemRef<std::int32_t> n) { n.store(axis_size(0)); });
}
