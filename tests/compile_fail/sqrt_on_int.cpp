// Misuse: sqrt on an integer Value (cast it to a floating-point type first).
// refx-expect: refx: sqrt needs a floating-point value; cast it first
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void norm() {
  trace([](VmemRef<const std::int32_t, 128> sq, VmemRef<float, 128> y) {
    y.store(cast<float>(sqrt(sq.load())));
  });
}
