// Misuse: an elementwise op on Values whose static extents differ (and
// neither is 1, which would broadcast).
// refx-expect: refx: operands of an elementwise op have static extents that do not broadcast
#include <refx/refx.hpp>

using namespace refx;

void add_halves() {
  trace([](VmemRef<const float, 256> x, VmemRef<float, 128> y) {
    auto lo = x.at(ds<128>(0)).load();
    auto hi = x.at(ds<64>(128)).load();  // 64, not 128
    y.store(lo + hi);
  });
}
