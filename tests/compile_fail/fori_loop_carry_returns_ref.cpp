// Misuse: a fori_loop body with a carry that returns a std::tuple holding a
// Ref instead of the carry's Values.
// refx-expect: refx: a fori_loop body must not return a Ref (or anything holding one)
#include <tuple>

#include <refx/refx.hpp>

using namespace refx;

void max_over_rows() {
  trace([](VmemRef<const float, 16, 128> x, VmemRef<float, 128> out) {
    auto init = std::tuple{x.at(0, all).load()};
    auto result = fori_loop(1, 16, [&](Scalar<std::int32_t> i, std::tuple<Value<float, extents<128>>> m) {
      out.store(max(std::get<0>(m), x.at(i, all).load()));
      return std::tuple{out};
    }, init);
    (void)result;
  });
}
