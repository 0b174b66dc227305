// Misuse: lax.cond ported with a literal in one branch: the branches return
// Scalar<std::int32_t> and int. Both must return one type.
// refx-expect: refx: both branches of a cond return the same type (a Value, a std::tuple of Values, or nothing);
// convert a number with Scalar<T>(n)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void next_block() {
  trace([](SmemRef<const std::int32_t> h, SmemRef<std::int32_t> out) {
    const auto v = h.load();
    out.store(cond(v + 1 < 4, [&] { return v + 1; }, [] { return 0; }));
  });
}
