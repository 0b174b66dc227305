// Misuse: splitting a dimension into two without the size of either
// (Pallas: einshape("a(bc)->abc", x, b=4)).
// refx-expect: refx: einshape cannot infer the sizes of a split dimension: give all but one of them with dim<'x', n>
#include <refx/refx.hpp>

using namespace refx;

void split() {
  trace([](VmemRef<const float, 8, 128> x) { (void)einshape<"a(bc)->abc">(x.load()); });
}
