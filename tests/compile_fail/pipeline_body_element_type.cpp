// Misuse: bf16 activations in Hbm, and a body written for f32 blocks (Pallas
// would upcast on load; a block keeps its operand's element type).
// refx-expect: refx: a pipeline body's block parameter has another element type than its operand; a block keeps the Hbm
// Ref's element type (cast the loaded Value with refx::cast<T>)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void gelu_in_f32() {
  trace([](HbmRef<const bf16, 256, 128> x, HbmRef<bf16, 256, 128> y) {
    const auto rows = [](std::int64_t i) { return std::tuple{i, 0}; };
    emit_pipeline(grid(2), [](VmemRef<const float, 128, 128> x_blk, VmemRef<bf16, 128, 128> y_blk) {
      y_blk.store(cast<bf16>(x_blk.load() * logistic(x_blk.load() * 1.702f)));
    })(in(x, block<128, 128>(rows)), out(y, block<128, 128>(rows)));
  });
}
