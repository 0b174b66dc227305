// Misuse: trace(...) given a string instead of a callable.
// refx-expect: refx: a kernel is a callable
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void build() {
  auto g = trace("my_kernel");
  (void)g;
}
