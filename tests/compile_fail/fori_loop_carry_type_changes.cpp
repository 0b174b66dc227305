// Misuse: a fori_loop body that returns a different type than its carry
// (here the carry is a Value<float, extents<128>>, the body returns a scalar).
// refx-expect: refx: a fori_loop body must return its carry
#include <refx/refx.hpp>

using namespace refx;

void sum_rows() {
  trace([](VmemRef<const float, 16, 128> x, VmemRef<float, 128> out) {
    auto acc = fori_loop(0, 16, [&](Scalar<std::int32_t> i, Value<float, extents<128>> a) {
      return reduce_sum<0>(a + x.at(i, all).load());
    }, zeros<float, 128>());
    out.store(acc);
  });
}
