// Misuse: stochastic rounding of an f64 Value (it rounds f32 Values).
// refx-expect: refx: stochastic_round rounds a float (f32) Value; cast it to float first
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void quantise() {
  trace([](VmemRef<const double, 128> x, VmemRef<bf16, 128> y) {
    prng_seed(0);
    y.store(stochastic_round<bf16>(x.load(), prng_random_bits<128>()));
  });
}
