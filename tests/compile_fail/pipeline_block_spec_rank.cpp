// Misuse: a BlockSpec of rank 1 for a rank-2 Hbm operand.
// refx-expect: refx: a BlockSpec's rank differs from its operand's rank; give one block extent per dimension of the Hbm Ref
#include <refx/refx.hpp>

using namespace refx;

void rows() {
  trace([](HbmRef<const float, 8, 128> x, HbmRef<float, 8, 128> z) {
    // block<128> names one dimension; x has two: block<1, 128> was meant.
    emit_pipeline(grid(8), [](VmemRef<const float, 128> a, VmemRef<float, 1, 128> b) { b.store(reshape<1, 128>(a.load())); })(
        in(x, block<128>([](std::int64_t i) { return i; })),
        out(z, block<1, 128>([](std::int64_t i) { return std::array{i, std::int64_t{0}}; })));
  });
}
