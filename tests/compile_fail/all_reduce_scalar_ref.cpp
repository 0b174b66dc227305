// Misuse: an in-place all_reduce of a rank-0 Ref (collectives cut the leading
// dimension into chunks).
// refx-expect: refx: collectives cut the leading dimension into chunks; pass a Ref of rank >= 1
#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void reduce() {
  trace([](SmemRef<float> total) { collectives::all_reduce(total, "x"); });
}
