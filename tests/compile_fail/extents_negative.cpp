// Misuse: a negative static extent other than refx::dyn.
// refx-expect: refx: an extent must be >= 0 or refx::dyn
#include <refx/refx.hpp>

using namespace refx;

void bad_extent() {
  trace([](VmemRef<float, 8, -4> x) { x.store(0.0f); }, {Shape{8, 4}});
}
