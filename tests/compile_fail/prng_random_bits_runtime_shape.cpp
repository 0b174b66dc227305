// Misuse: random bits of a shape given at run time, as Pallas'
// prng_random_bits(shape) (refx takes it as template arguments).
// refx-expect: refx: prng_random_bits needs a static shape: write prng_random_bits<8, 128>() (no refx::dyn, no run-time Shape)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void dropout_mask() {
  trace([](VmemRef<std::uint32_t, 8, 128> mask) {
    prng_seed(0);
    prng_random_bits(Shape{8, 128});
    (void)mask;
  });
}
