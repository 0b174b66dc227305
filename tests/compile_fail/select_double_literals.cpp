// Misuse: select between two double literals (Pallas' causal mask,
// jnp.where(mask, 0.0, mask_value), ported as is): no Value gives them an
// element type, so they make an f64 Value, which the f32 scores are not
// added to. (A double beside a Value takes its type, as in x + 2.0:
// select(mask, 0.0, s.load()) is f32.)
// refx-expect: refx: both operands of an arithmetic op must have one element type
// refx-expect: as in select(c, 0.0, -1e30): write float literals, 0.0f, or Scalar<float>(...)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void causal_mask() {
  trace([](VmemRef<const float, 8, 128> s, VmemRef<float, 8, 128> p) {
    constexpr double mask_value = -0.7 * 3.4028235e38;
    auto row = iota<std::int32_t, 8, 128>(0), col = iota<std::int32_t, 8, 128>(1);
    auto bias = select(col <= row, 0.0, mask_value);
    p.store(s.load() + bias);
  });
}
