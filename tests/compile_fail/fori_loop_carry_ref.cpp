// Misuse: the accumulator Ref given as a fori_loop carry, as the init_val of
// lax.fori_loop would be; a carry holds Values.
// refx-expect: refx: a fori_loop carry holds Values, not Refs: a Ref is not carried, the body writes it directly (its
// writes persist across iterations); to carry its contents, pass x.load() and store the result after the loop
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void column_sums() {
  trace([](VmemRef<const float, 16, 128> x, VmemRef<float, 128> acc) {
    fori_loop(
        0, 16,
        [&](Scalar<std::int32_t> r, VmemRef<float, 128> a) {
          a.store(a.load() + x.at(r, all).load());
          return a;
        },
        acc);
  });
}
