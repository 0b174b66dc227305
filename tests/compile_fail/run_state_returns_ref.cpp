// Misuse: a run_state body that returns its Ref. The Ref ends with the body;
// run_state already returns the Ref's final contents.
// refx-expect: refx: a run_state body must not return a Ref (or anything holding one)
#include <refx/refx.hpp>

using namespace refx;

void running_sum() {
  trace([](VmemRef<const float, 4, 128> x, VmemRef<float, 128> y) {
    auto total = run_state(zeros<float, 128>(), [&](VmemRef<float, 128> acc) {
      for (int r = 0; r < 4; ++r) acc += x.at(r, all).load();
      return acc;
    });
    y.store(total);
  });
}
