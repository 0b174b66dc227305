// Misuse: exp on an integer Value (cast it to a floating-point type first).
// refx-expect: refx: exp needs a floating-point value; cast it first
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void softmax_numerator() {
  trace([](VmemRef<const std::int32_t, 128> logits, VmemRef<float, 128> y) {
    y.store(cast<float>(exp(logits.load())));
  });
}
