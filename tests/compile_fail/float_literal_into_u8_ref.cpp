// Misuse: a floating-point literal stored into a u8 Ref (silently truncated in plain C++).
// refx-expect: refx: a floating-point literal stored into an integer Ref would be truncated; write an integer literal or use refx::cast
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void fill() {
  trace([](VmemRef<std::uint8_t, 8> pixels) { pixels.store(0.5f); });
}
