// Misuse: arithmetic between an integer Value and a floating-point literal.
// refx-expect: refx: a floating-point literal with an integer Value would be truncated
#include <refx/refx.hpp>

using namespace refx;

void scale() {
  trace([](VmemRef<const std::int32_t, 8> x, VmemRef<std::int32_t, 8> y) { y.store(x.load() * 1.5f); });
}
