// Misuse: an einshape equation whose right side names a letter its left
// side does not (Pallas has no expand or squeeze in einshape either).
// refx-expect: refx: einshape's two sides must name the same letters
#include <refx/refx.hpp>

using namespace refx;

void reshape_by_equation() {
  trace([](VmemRef<const float, 8, 128> x) { (void)einshape<"ab->ac">(x.load()); });
}
