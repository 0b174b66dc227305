// Misuse: fori_loop(body, lo, hi): arguments in the wrong order.
// refx-expect: refx: fori_loop(lo, hi, body[, carry]) takes the bounds first
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void loop() {
  trace([](VmemRef<float, 128> y) {
    fori_loop([&](Scalar<std::int32_t>) { y.store(y.load() * 2.0f); }, 0, 4);
  });
}
