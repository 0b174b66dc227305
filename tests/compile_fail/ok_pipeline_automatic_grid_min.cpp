// Positive control: a generic index map clamping with refx::min and
// refx::max over an automatic grid of more than 256 steps: it is called with
// traced grid indices (the grid rolls) and, compiled for the unrolled form
// too, with std::int64_t ones, where min and max of integers are integers.
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void clamped_rows() {
  trace([](HbmRef<const float, 64, 4096> x, HbmRef<float, 64, 4096> z) {
    const auto clamp = [](auto i, auto j) { return std::tuple{refx::max(refx::min(i, 3), 0), j}; };
    emit_pipeline(grid(8, 32), [](VmemRef<const float, 8, 128> a, VmemRef<float, 8, 128> b) { b.store(a.load()); })(
        in(x, block<8, 128>(clamp)), out(z, block<8, 128>([](auto i, auto j) {
                                           return std::tuple{i, j};
                                         })));
  });
}
