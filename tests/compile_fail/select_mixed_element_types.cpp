// Misuse: select between a float and an int Value.
// refx-expect: refx: select's two alternatives must have one element type
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void clamp() {
  trace([](VmemRef<const float, 128> x, VmemRef<const std::int32_t, 128> k, VmemRef<float, 128> y) {
    y.store(select(x.load() > 0.0f, x.load(), k.load()));
  });
}
