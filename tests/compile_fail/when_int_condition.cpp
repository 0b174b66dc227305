// Misuse: an integer Scalar as when's condition.
// refx-expect: refx: when's condition is a bool Scalar
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void first_only() {
  trace([](VmemRef<float, 128> y) {
    Scalar<std::int32_t> me = axis_index("x");
    when(me, [&] { y.store(y.load() * 2.0f); });
  });
}
