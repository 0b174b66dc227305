// Misuse: a sample_block sampler that draws a Value of another shape than
// the tile.
// refx-expect: refx: sample_block's sampler returns a Value of the tile's extents
#include <refx/refx.hpp>

using namespace refx;

void noise() {
  trace([](VmemRef<float, 16, 128> out) {
    out.store(sample_block<extents<16, 128>, extents<8, 128>>([] { return stateful_uniform<8, 256>(); }, 0,
                                                              Shape{16, 128}, 0, 0));
  });
}
