// Misuse: waiting for a permute by naming the buffer it fills (the way a
// port of `send.wait()` on a DMA ref reads), not the future it returned.
// refx-expect: refx: ppermute_done takes what ppermute_start returned (auto f = ppermute_start(src, dst, axis, shift);
// ... ppermute_done(f)), not a Ref
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void rotate_right() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> from_left) {
    (void)ppermute_start(x, from_left, "x", 1);
    ppermute_done(from_left);
  });
}
