// Misuse: a floating-point seed (seeds are int32, as in Pallas).
// refx-expect: refx: prng_seed takes int32 seeds: integers or Scalar<std::int32_t> values (convert others with refx::cast<std::int32_t>(v))
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void seeded() {
  trace([](VmemRef<std::uint32_t, 128> bits) {
    prng_seed(0, 0.5f);
    bits.store(prng_random_bits<128>());
  });
}
