// Misuse: passing a Ref (not a Value) to debug_print.
// refx-expect: refx: debug_print / io_callback take traced Values (load() a Ref first)
#include <refx/refx.hpp>
#include <refx/trace/effects.hpp>

using namespace refx;

void show() {
  trace([](VmemRef<const float, 4> x) { debug_print("x = {}", x); });
}
