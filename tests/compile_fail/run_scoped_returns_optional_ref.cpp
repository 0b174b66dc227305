// Misuse: a run_scoped body returning std::optional of its scratch Ref.
// refx-expect: refx: a run_scoped body must not return a Ref (or anything holding one)
#include <optional>
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void stage() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    auto s = run_scoped([&](VmemRef<float, 128> tmp) {
      tmp.store(x.load());
      return std::optional{tmp};
    });
    y.store(s->load());
  });
}
