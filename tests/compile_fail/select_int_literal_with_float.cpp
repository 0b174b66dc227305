// Misuse: select between a float Value and a double literal is fine; an int Value and a float literal is not.
// refx-expect: refx: a floating-point literal with an integer Value would be truncated
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void clamp() {
  trace([](VmemRef<const std::int32_t, 128> k, VmemRef<std::int32_t, 128> y) {
    y.store(select(k.load() > 0, k.load(), 0.5f));
  });
}
