// Misuse: working_slot on a Ref whose leading dimension is not 2.
// refx-expect: refx: working_slot takes a DoubleBuffer (leading dimension 2)
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void shift() {
  trace([](VmemRef<float, 3, 128> buf) {
    fori_loop(0, 4, [&](Scalar<std::int32_t> step) { working_slot(buf, step).store(0.0f); });
  });
}
