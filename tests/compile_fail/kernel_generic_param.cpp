// Misuse: a generic (auto) kernel parameter: trace builds the kernel's Refs
// from the declared parameter types.
// refx-expect: refx: trace needs a kernel with explicit parameter types (Ref<...>, semaphores), not auto
#include <refx/refx.hpp>

using namespace refx;

void copy() {
  trace([](auto x, VmemRef<float, 128> y) { y.store(x.load()); });
}
