// Misuse: a port of a pallas_call kernel whose body kept the kernel's Hbm
// parameter types; the body sees the Vmem blocks the pipeline copied in.
// refx-expect: refx: a pipeline body sees Vmem blocks, not the Hbm Refs given to in(...) / out(...); declare the
// parameter as a VmemRef of the BlockSpec's block extents (the pipeline copies the blocks between Hbm and Vmem)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void add_one() {
  trace([](HbmRef<const float, 512, 128> x, HbmRef<float, 512, 128> y) {
    const auto rows = [](std::int64_t i) { return std::tuple{i, 0}; };
    emit_pipeline(grid(4), [](HbmRef<const float, 128, 128> x_blk, HbmRef<float, 128, 128> y_blk) {
      sync_copy(x_blk, y_blk);
    })(in(x, block<128, 128>(rows)), out(y, block<128, 128>(rows)));
  });
}
