// Misuse: all_to_all into an output of another element type.
// refx-expect: refx: all_to_all's output must have its input's element type
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void exchange() {
  trace([](VmemRef<const float, 4, 128> x, VmemRef<std::int32_t, 4, 128> out) { collectives::all_to_all(x, out, "x"); });
}
