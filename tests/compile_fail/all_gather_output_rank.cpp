// Misuse: all_gather into an output without the extra leading (device) dimension.
// refx-expect: refx: all_gather
// refx-expect: output has one more (leading) dimension than its input
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void gather() {
  auto exe = kernel([](VmemRef<const float, 128> x, VmemRef<float, 512> out) {
               collectives::all_gather(x, out, "x");  // out must be (4, 128)
             }).compile(Mesh{{"x", 4}});
  (void)exe;
}
