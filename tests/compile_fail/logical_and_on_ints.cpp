// Misuse: & on integer Values (refx's & and | are logical, on bool Values).
// refx-expect: refx: & and | combine bool values (comparisons)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void low_bits() {
  trace([](VmemRef<const std::int32_t, 128> x, VmemRef<std::int32_t, 128> y) {
    y.store(x.load() & 0xff);
  });
}
