// Positive control for the random-bits misuses: seeds of every accepted
// kind, static shapes, stochastic rounding to bf16 and f16.
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void dropout_and_quantise() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<const std::int32_t> seed, VmemRef<bf16, 8, 128> y,
           VmemRef<f16, 8, 128> z) {
    const std::int16_t salt = 3;
    prng_seed(seed.load(), 7, salt, axis_index("x"));
    const Value<std::uint32_t, extents<8, 128>> bits = prng_random_bits<8, 128>();
    y.store(stochastic_round<bf16>(x.load(), bits));
    z.store(stochastic_round<f16>(x.load(), prng_random_bits<8, 128>()));
  });
}
