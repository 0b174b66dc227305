// Misuse: a C++ if on a traced Scalar (Pallas' `@pl.when(k_i == 3)` ported as
// a plain if). The comparison is a Value<bool>, which has no value while the
// kernel is traced.
// refx-expect: refx: a traced value has no value while the kernel is traced, so it cannot steer C++ control flow
// refx-expect: when(cond, [&] { ... })
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void last_block_only() {
  trace([](SmemRef<const std::int32_t, 1> k, VmemRef<float, 8, 128> acc) {
    Scalar<std::int32_t> k_i = k.at(0).load();
    if (k_i == 3) {
      acc.store(acc.load() * 0.5f);
    }
  });
}
