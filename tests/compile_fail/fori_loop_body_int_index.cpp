// Misuse: a fori_loop body taking a plain int index.
// refx-expect: refx: a fori_loop body takes the loop index as a Scalar
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void loop() {
  trace([](VmemRef<float, 8, 128> y) {
    fori_loop(0, 8, [&](int i) { y.at(i, all).store(y.at(i, all).load() * 2.0f); });
  });
}
