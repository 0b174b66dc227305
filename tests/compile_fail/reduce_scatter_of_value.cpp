// Misuse: reduce_scatter of a Value (collectives operate on Refs).
// refx-expect: refx: reduce_scatter operates on Refs
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void scatter() {
  auto exe = kernel([](VmemRef<const float, 8, 128> x, VmemRef<float, 2, 128> out) {
               collectives::reduce_scatter(x.load() * 2.0f, out, "x");
             }).compile(Mesh{{"x", 4}});
  (void)exe;
}
