// Misuse: the third template argument of Ref is not a memory space tag.
// refx-expect: refx: the third argument of Ref must be a memory space: Hbm, Vmem or Smem
#include <refx/refx.hpp>

using namespace refx;

struct Shared {};  // not a refx memory space

void shared_memory() {
  trace([](Ref<float, extents<64>, Shared> x) { (void)x; });
}
