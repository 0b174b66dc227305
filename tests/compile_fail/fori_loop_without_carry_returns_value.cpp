// Misuse: a fori_loop body without a carry that returns a Value (it would be
// dropped); give fori_loop a carry to thread values through iterations.
// refx-expect: refx: a fori_loop body without a carry returns nothing; pass a carry to return values
#include <refx/refx.hpp>

using namespace refx;

void sum_rows() {
  trace([](VmemRef<const float, 16, 128> x, VmemRef<float, 128> out) {
    fori_loop(0, 16, [&](Scalar<std::int32_t> i) { return x.at(i, all).load(); });
    out.store(0.0f);
  });
}
