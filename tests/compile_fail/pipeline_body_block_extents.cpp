// Misuse: the tile height changed in the BlockSpecs (256 rows) but not in the
// body's parameter (still 128 rows).
// refx-expect: refx: a pipeline body's block parameter has other extents than its BlockSpec; declare it with the static
// extents of block<...>(map)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

constexpr std::int64_t kTile = 256;

void relu() {
  trace([](HbmRef<const float, 1024, 128> x, HbmRef<float, 1024, 128> y) {
    const auto rows = [](std::int64_t i) { return std::tuple{i, 0}; };
    emit_pipeline(grid(1024 / kTile), [](VmemRef<const float, 128, 128> x_blk, VmemRef<float, kTile, 128> y_blk) {
      y_blk.store(max(x_blk.load(), 0.0f));
    })(in(x, block<kTile, 128>(rows)), out(y, block<kTile, 128>(rows)));
  });
}
