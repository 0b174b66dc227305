// Misuse: a masked store whose mask has another shape than the Ref view
// (a row's mask for a whole block).
// refx-expect: refx: a masked store's mask has the Ref view's shape (a bool Value of its extents)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void masked() {
  trace([](VmemRef<float, 8, 128> y) {
    const auto row_mask = iota<std::int32_t, 128>(0) < 64;
    store(y, 1.0f, row_mask);
  });
}
