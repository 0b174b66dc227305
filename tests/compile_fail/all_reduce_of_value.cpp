// Misuse: an in-place all_reduce of a Value (collectives operate on Refs).
// refx-expect: refx: collectives operate on Refs
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void reduce() {
  auto exe = kernel([](VmemRef<float, 4, 128> x) {
               auto v = x.load();
               collectives::all_reduce(v, "x");
               x.store(v);
             }).compile(Mesh{{"x", 4}});
  (void)exe;
}
