// Misuse: a cond branch that returns a Ref (picking a buffer); a Ref is a
// handle to memory the branch cannot hand out. Return a Value, or write
// into the Ref inside the branch.
// refx-expect: refx: a cond branch must not return a Ref (or anything holding one); return Values, or write into the
// Ref inside the branch
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void pick() {
  trace([](SmemRef<const std::int32_t> k, VmemRef<float, 8> a, VmemRef<float, 8> b) {
    const auto r = cond(k.load() == 0, [&] { return a; }, [&] { return b; });
    (void)r;
  });
}
