// Misuse: a fori_loop with a carry whose body takes only the index.
// refx-expect: refx: a fori_loop body with a carry takes the index and the carry and returns the new carry
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void loop() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    auto acc = fori_loop(0, 4, [&](Scalar<std::int32_t> i) { return x.load(); }, x.load());
    y.store(acc);
  });
}
