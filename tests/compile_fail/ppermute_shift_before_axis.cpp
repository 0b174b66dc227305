// Misuse: the shift given before the axis name, in the order of
// lax.ppermute's (x, axis_name, perm) read backwards.
// refx-expect: refx: ppermute_start's arguments are (src, dst, axis, shift): the axis name comes before the shift, e.g.
// ppermute_start(x, y, "x", 1)
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void rotate_left() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> from_right) {
    auto f = ppermute_start(x, from_right, -1, "x");
    ppermute_done(f);
  });
}
