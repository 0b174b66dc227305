// Misuse: a when body that returns a Ref.
// refx-expect: refx: a when body must not return a Ref (or anything holding one)
#include <refx/refx.hpp>

using namespace refx;

void clamp_first() {
  trace([](SmemRef<const std::int32_t> flag, VmemRef<float, 128> y) {
    when(flag.load() != 0, [&] {
      y.store(0.0f);
      return y;
    });
  });
}
