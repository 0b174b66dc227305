// Misuse: a map function that captures (map calls F{} on the elements, in a
// loop compiled from the function's type; captured state has no place there).
// refx-expect: refx: map's function must not capture anything
#include <refx/refx.hpp>

using namespace refx;

void capturing(float k) {
  trace([k](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    y.store(map([k](float a) { return a * k; }, x.load()));
  });
}
