// Misuse: a fori_loop body that takes no index.
// refx-expect: refx: a fori_loop body takes the loop index as a Scalar
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void loop() {
  trace([](VmemRef<float, 128> y) {
    fori_loop(0, 4, [&]() { y.store(y.load() * 2.0f); });
  });
}
