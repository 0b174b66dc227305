// Misuse: all_to_all of a Value (collectives move data between Refs).
// refx-expect: refx: all_to_all operates on Refs
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void exchange() {
  auto exe = kernel([](VmemRef<const float, 4, 128> x, VmemRef<float, 4, 128> out) {
               collectives::all_to_all(x.load(), out, "x");
             }).compile(Mesh{{"x", 4}});
  (void)exe;
}
