// Misuse: a floating-point step for working_slot.
// refx-expect: refx: a floating-point number where an integer is expected
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void step() {
  trace([](DoubleBuffer<float, 128> buf, VmemRef<float, 128> y) { y.store(working_slot(buf, 1.0).load()); });
}
