// Misuse: a kernel that returns a Value instead of writing an output Ref.
// refx-expect: refx: a kernel returns nothing; write results into its output Refs
#include <refx/refx.hpp>

using namespace refx;

void square() {
  trace([](VmemRef<const float, 128> x) { return x.load() * x.load(); });
}
