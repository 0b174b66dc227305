// Misuse: an integer Scalar initialised from a double.
// refx-expect: refx: a floating-point number where an integer is expected
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void scale() {
  trace([](VmemRef<std::int32_t, 128> y) {
    Scalar<std::int32_t> k = 2.5;
    y.store(y.load() * k);
  });
}
