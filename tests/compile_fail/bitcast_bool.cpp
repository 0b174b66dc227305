// Misuse: bitcasting a Ref's bytes to bool (not every byte is a bool).
// refx-expect: refx: bitcast does not take bool elements (not every byte is a bool); bitcast u8 or i8 instead
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void mask() {
  trace([](VmemRef<std::uint8_t, 128> x, VmemRef<bool, 128> y) { y.store(x.bitcast<bool>().load()); });
}
