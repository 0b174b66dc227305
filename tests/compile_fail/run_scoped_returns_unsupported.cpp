// Misuse: a run_scoped body that returns a plain C++ value (not void, a Value
// or a std::tuple of Values).
// refx-expect: refx: a run_scoped body returns void, a Value or a std::tuple of Values
#include <refx/refx.hpp>

using namespace refx;

void scratch_count() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    int n = run_scoped([&](VmemRef<float, 128> tmp) {
      tmp.store(x.load());
      y.store(tmp.load());
      return 128;
    });
    (void)n;
  });
}
