// Misuse: a reduce_scatter of a bool Ref (bool has no sum or max).
// refx-expect: refx: all_reduce and reduce_scatter combine numbers; a bool Ref has no sum or max (reduce int32_t)
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void scatter() {
  trace([](VmemRef<const bool, 8, 16> x, VmemRef<bool, 2, 16> out) { collectives::reduce_scatter(x, out, "x"); });
}
