// Misuse: a generic index map written for traced grid indices only
// (Pallas' lax.shift_right_logical(i, 1): refx's takes Values) over an automatic
// grid: grid(8, 64) has more than 256 steps and rolls, but the grid is also
// compiled unrolled, where the map gets std::int64_t indices. refx says to
// roll the grid explicitly or make the map take integers.
// refx-expect: refx: a BlockSpec's index map compiles with traced grid indices (Scalar<std::int32_t>)
// refx-expect: roll it (grid(...).rolled())
// The compiler's own error in the map's body comes first (no
// shift_right_logical for two integers, with the instantiation chain).
// refx-max-first: 80
// (g++ 12 printed the refx: line at output line 66 when this was written, clang++ 15 at 50.)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void pairs_of_rows() {
  trace([](HbmRef<const float, 64, 8192> x, HbmRef<float, 64, 8192> z) {
    const auto map = [](auto i, auto j) { return std::tuple{shift_right_logical(i, 1), j}; };
    emit_pipeline(grid(8, 64), [](VmemRef<const float, 8, 128> a, VmemRef<float, 8, 128> b) { b.store(a.load()); })(
        in(x, block<8, 128>(map)), out(z, block<8, 128>([](auto i, auto j) {
                                         return std::tuple{i, j};
                                       })));
  });
}
