// Misuse: cast of a Ref.
// refx-expect: refx: cast converts a Value, not a Ref
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void widen() {
  trace([](VmemRef<const std::int32_t, 128> x, VmemRef<float, 128> y) { y.store(cast<float>(x)); });
}
