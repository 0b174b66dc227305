// Misuse: stochastic rounding to a type that is not narrower (bf16 or f16).
// refx-expect: refx: stochastic_round rounds to refx::bf16 or refx::f16: stochastic_round<bf16>(x, bits)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void quantise() {
  trace([](VmemRef<const double, 128> x, VmemRef<float, 128> y) {
    prng_seed(0);
    y.store(stochastic_round<float>(cast<float>(x.load()), prng_random_bits<128>()));
  });
}
