// Misuse: random bits of a dynamic extent (the shape must be static).
// refx-expect: refx: prng_random_bits needs a static shape: write prng_random_bits<8, 128>() (no refx::dyn, no run-time Shape)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void dropout_mask() {
  trace([](Ref<std::uint32_t, extents<dyn>> mask) {
    prng_seed(0);
    mask.store(prng_random_bits<dyn>());
  }, {Shape{128}});
}
