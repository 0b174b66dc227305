// Misuse: a run_state body that returns a Value: run_state itself returns the
// Refs' final contents, so the body returns nothing.
// refx-expect: refx: a run_state body returns nothing; run_state returns the Refs
#include <refx/refx.hpp>

using namespace refx;

void normalise() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    auto out = run_state(x.load(), [&](VmemRef<float, 128> v) {
      v.store(v.load() * 0.5f);
      return v.load();
    });
    y.store(out);
  });
}
