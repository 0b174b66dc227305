// Misuse: all_gather of a Value (collectives move data between Refs).
// refx-expect: refx: all_gather operates on Refs
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void gather() {
  auto exe = kernel([](VmemRef<const float, 128> x, VmemRef<float, 4, 128> out) {
               collectives::all_gather(x.load(), out, "x");
             }).compile(Mesh{{"x", 4}});
  (void)exe;
}
