// Misuse: an index map returning one block index for a rank-2 operand.
// refx-expect: refx: an index map returns one block index per dimension of its operand
#include <refx/refx.hpp>

using namespace refx;

void rows() {
  trace([](HbmRef<const float, 8, 128> x, HbmRef<float, 8, 128> z) {
    const auto row = [](std::int64_t i) { return std::array{i, std::int64_t{0}}; };
    emit_pipeline(grid(8), [](VmemRef<const float, 1, 128> a, VmemRef<float, 1, 128> b) { b.store(a.load()); })(
        in(x, block<1, 128>([](std::int64_t i) { return i; })),  // should return {i, 0}
        out(z, block<1, 128>(row)));
  });
}
