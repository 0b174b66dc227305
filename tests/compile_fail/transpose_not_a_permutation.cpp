// Misuse: transpose<Axes...> with an axis twice (not a permutation).
// refx-expect: refx: transpose<Axes...> takes a permutation of the Value's axes (each axis once, one per dimension)
#include <refx/refx.hpp>

using namespace refx;

void flip() {
  trace([](VmemRef<const float, 2, 3, 4> x) { (void)transpose<0, 0, 1>(x.load()); });
}
