// Misuse: a run_scoped body returning a struct that holds its scratch Ref.
// refx-expect: refx: a run_scoped body returns void, a Value or a std::tuple of Values, not a struct
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

struct Staged {
  VmemRef<float, 128> buf;
};
void stage() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    auto s = run_scoped([&](VmemRef<float, 128> tmp) {
      tmp.store(x.load());
      return Staged{tmp};
    });
    y.store(s.buf.load());
  });
}
