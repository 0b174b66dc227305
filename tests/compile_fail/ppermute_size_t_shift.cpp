// Misuse: a std::size_t shift for ppermute_start (unsigned 64-bit into the
// signed 64-bit shift: a value above 2^63 - 1 would become negative).
// refx-expect: refx: an unsigned integer of 64 bits (std::size_t, std::uint64_t) where a signed 64-bit integer
#include <cstddef>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void rotate(std::size_t k) {
  trace([&](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    auto f = ppermute_start(x, y, "x", k);
    ppermute_done(f);
  });
}
