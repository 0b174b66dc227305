// Misuse: a column max ported from a kernel tuned for 128-row tiles, run over
// an array of 96 rows: a 128 x 128 block would be padded past the array's end
// on every step (32 rows of whatever the slot held in the max).
// refx-expect: refx: a BlockSpec's block is larger than its input operand along a dimension (every block there
// would read padding past the array's end); give a block extent at most the operand's extent there (the whole
// dimension at most)
#include <array>
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void column_max() {
  trace([](HbmRef<const float, 96, 512> x, HbmRef<float, 1, 512> colmax) {
    const auto col = [](std::int64_t j) { return std::array<std::int64_t, 2>{0, j}; };
    emit_pipeline(grid(4), [](VmemRef<const float, 128, 128> x_blk, VmemRef<float, 1, 128> m_blk) {
      m_blk.store(reduce_max<0>(x_blk.load(), keepdims));
    })(in(x, block<128, 128>(col)), out(colmax, block<1, 128>(col)));
  });
}
