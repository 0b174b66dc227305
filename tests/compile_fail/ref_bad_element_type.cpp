// Misuse: a Ref of an unsupported element type (uint8_t).
// refx-expect: element type must be bool, int32_t, int64_t, float or double
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void bytes() {
  trace([](VmemRef<const std::uint8_t, 64> x, VmemRef<float, 64> y) {
    (void)x;
    y.store(0.0f);
  });
}
