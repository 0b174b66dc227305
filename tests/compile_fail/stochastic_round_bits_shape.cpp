// Misuse: random bits of another shape than the rounded Value (one 32-bit
// word per element is needed).
// refx-expect: refx: stochastic_round's random bits must be a std::uint32_t Value of x's extents (prng_random_bits of the same shape)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void quantise() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<bf16, 8, 128> y) {
    prng_seed(0);
    y.store(stochastic_round<bf16>(x.load(), prng_random_bits<128>()));
  });
}
