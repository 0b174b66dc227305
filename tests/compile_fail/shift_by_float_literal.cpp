// Misuse: a shift amount written as a floating-point literal.
// refx-expect: refx: a shift amount must be an integer; write an integer literal (or an integer Value)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void unpack() {
  trace([](VmemRef<const std::uint32_t, 128> x, VmemRef<std::uint32_t, 128> y) {
    y.store(shift_right_logical(x.load(), 8.0));
  });
}
