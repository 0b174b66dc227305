// Misuse: a std::int64_t loop bound (narrowed to the 32-bit loop index).
// refx-expect: refx: an integer wider than 32 bits (std::int64_t, std::size_t) where a 32-bit integer is expected
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void loop(std::int64_t n) {
  trace([&](VmemRef<float, 8, 128> y) {
    fori_loop(0, n, [&](Scalar<std::int32_t> i) { y.at(i, all).store(y.at(i, all).load() * 2.0f); });
  });
}
