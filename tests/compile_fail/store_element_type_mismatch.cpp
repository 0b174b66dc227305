// Misuse: storing a Value of another element type (no implicit narrowing or
// widening between element types): Value<int32_t> into Ref<float>.
// refx-expect: element type differs from the Ref
// refx-expect: (no implicit narrowing); convert it with refx::cast<T>(value)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void histogram_to_float() {
  trace([](VmemRef<const std::int32_t, 256> counts, VmemRef<float, 256> out) {
    out.store(counts.load());  // needs refx::cast<float>(counts.load())
  });
}
