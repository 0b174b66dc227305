// Misuse: kernel(...) given a number instead of a callable.
// refx-expect: refx: kernel(f) takes the kernel as a callable
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void build() {
  auto k = kernel(42);
  (void)k;
}
