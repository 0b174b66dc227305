// Misuse: Pallas's `pl.BlockSpec((8, 128), lambda i: (i, 0))` ported as
// std::array{i, 0}: i is std::int64_t and 0 an int, so std::array's deduction
// fails in the map's body (the compiler says so first, on this line); refx's
// sentence names the element types, not the number of grid indices.
// refx-expect: refx: a BlockSpec's index map does not compile when called with its grid indices
// The compiler's own error on the map's line comes first, as it must (it is
// in the user's code, before refx sees the map): g++ 12 lists std::array's
// deduction candidates in about 35 lines, clang in 13.
// refx-max-first: 70
// (g++ also prints the include chain of std::array's declaration, which
// grows with refx's headers: 55 lines before refx's sentence on 2026-11-28.)
#include <refx/refx.hpp>

using namespace refx;

void row_blocks() {
  trace([](HbmRef<const float, 64, 128> x, HbmRef<float, 64, 128> z) {
    const auto row_block = [](std::int64_t i) { return std::array{i, 0}; };
    emit_pipeline(grid(8), [](VmemRef<const float, 8, 128> a, VmemRef<float, 8, 128> b) { b.store(a.load() * 2.0f); })(
        in(x, block<8, 128>(row_block)), out(z, block<8, 128>(row_block)));
  });
}
