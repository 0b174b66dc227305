// Misuse: a grid asked to roll whose index map takes std::int64_t grid
// indices (a rolled grid calls its maps with traced Scalar<std::int32_t>).
// refx-expect: refx: a rolled grid calls its index maps with traced grid indices (Scalar<std::int32_t>); write each map as a generic lambda taking auto indices ([](auto i, auto j) { ... }), or keep the grid unrolled (grid(...).unrolled())
#include <refx/refx.hpp>

using namespace refx;

void rows() {
  trace([](HbmRef<const float, 4096, 128> x, HbmRef<float, 4096, 128> z) {
    emit_pipeline(grid(4096).rolled(),
                  [](VmemRef<const float, 1, 128> a, VmemRef<float, 1, 128> b) { b.store(a.load()); })(
        in(x, block<1, 128>([](std::int64_t i) { return std::tuple{i, 0}; })),  // should take `auto i`
        out(z, block<1, 128>([](auto i) { return std::tuple{i, 0}; })));
  });
}
