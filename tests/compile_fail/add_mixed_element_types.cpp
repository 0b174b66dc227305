// Misuse: arithmetic on Values of different element types (no implicit
// promotion): Value<float> + Value<int32_t>.
// refx-expect: refx: both operands of an arithmetic op must have one element type; convert one with refx::cast<T>(v)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void offset() {
  trace([](VmemRef<const float, 128> x, VmemRef<const std::int32_t, 128> k, VmemRef<float, 128> y) {
    y.store(x.load() + k.load());
  });
}
