// Misuse: a when body that returns a Value (there is no value where the
// condition is false); cond(pred, then_fn, else_fn) returns one.
// refx-expect: refx: a when body returns nothing; for a result, write cond(pred, then_fn, else_fn) (Pallas' lax.cond),
// or write it into a Ref
#include <refx/refx.hpp>

using namespace refx;

void maybe_scale() {
  trace([](SmemRef<const std::int32_t> flag, VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    y.store(x.load());
    when(flag.load() != 0, [&] { return x.load() * 2.0f; });
  });
}
