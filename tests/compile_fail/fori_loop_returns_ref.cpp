// Misuse: a fori_loop body that returns a Ref.
// refx-expect: refx: a fori_loop body must not return a Ref (or anything holding one)
#include <refx/refx.hpp>

using namespace refx;

void rows_into_acc() {
  trace([](VmemRef<const float, 16, 128> x, VmemRef<float, 128> acc) {
    acc.store(0.0f);
    fori_loop(0, 16, [&](Scalar<std::int32_t> i) {
      acc += x.at(i, all).load();
      return acc;
    });
  });
}
