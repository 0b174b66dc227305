// Misuse: receiving_slot on a Ref whose leading dimension is not 2.
// refx-expect: refx: receiving_slot takes a DoubleBuffer (leading dimension 2)
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void shift() {
  trace([](VmemRef<float, 4, 128> buf, VmemRef<float, 128> out) {
    fori_loop(0, 4, [&](Scalar<std::int32_t> step) { out.store(receiving_slot(buf, step).load()); });
  });
}
