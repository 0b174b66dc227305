// Misuse: a floating-point ppermute shift.
// refx-expect: refx: a shift along an axis is an integer number of positions
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void rotate() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    auto f = ppermute_start(x, y, "x", 0.5);
    ppermute_done(f);
  });
}
