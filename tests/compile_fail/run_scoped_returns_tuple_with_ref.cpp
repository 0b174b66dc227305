// Misuse: a run_scoped body that returns a std::tuple holding one of its
// scratch Refs (the scratch buffer is freed when the scope ends).
// refx-expect: refx: a run_scoped body must not return a Ref (or anything holding one)
// refx-expect: Return Values read with load() instead
#include <tuple>

#include <refx/refx.hpp>

using namespace refx;

void stage_through_scratch() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y) {
    auto [sum, scratch] = run_scoped([&](VmemRef<float, 8, 128> tmp) {
      tmp.store(x.load() * 2.0f);
      return std::tuple{reduce_sum<0>(tmp.load()), tmp};
    });
    y.at(0, all).store(sum);
    y.store(scratch.load());
  });
}
