// Misuse: a floating-point loop bound.
// refx-expect: refx: a floating-point number where an integer is expected
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void loop() {
  trace([](VmemRef<float, 8, 128> y) {
    fori_loop(0, 7.5, [&](Scalar<std::int32_t> i) { y.at(i, all).store(y.at(i, all).load() * 2.0f); });
  });
}
