// Misuse: an all_reduce of a bool Ref (bool has no sum or max).
// refx-expect: refx: all_reduce and reduce_scatter combine numbers; a bool Ref has no sum or max (reduce int32_t)
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void reduce() {
  trace([](VmemRef<bool, 8, 16> flags) { collectives::all_reduce(flags, "x", ReduceOp::max); });
}
