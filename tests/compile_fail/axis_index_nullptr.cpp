// Misuse: nullptr as an axis name.
// refx-expect: refx: an axis name is a string such as "x" (the name of a mesh axis), not nullptr
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void where_am_i() {
  trace([](SmemRef<std::int32_t> me) { me.store(axis_index(nullptr)); });
}
