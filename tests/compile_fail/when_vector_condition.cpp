// Misuse: a bool vector (not a Scalar) as when's condition.
// refx-expect: refx: when's condition is a bool Scalar
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void positive_only() {
  trace([](VmemRef<float, 128> y) {
    when(y.load() > 0.0f, [&] { y.store(y.load() * 2.0f); });
  });
}
