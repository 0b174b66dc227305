// Misuse: keeping ref[i] in a variable and assigning to it later, as if it
// were the element: `e` holds the value read at ref[i], so `e = v` would
// write nothing. Write `buffer[0] = next` directly.
// refx-expect: refx: a variable holding ref[i] holds the value read there, not the element: assigning to it
// refx-expect: writes nothing; write ref[i] = v where you index
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void flip() {
  trace([](SmemRef<std::int32_t, 1> buffer) {
    auto e = buffer[0];
    e = select(e == 0, Scalar<std::int32_t>(1), Scalar<std::int32_t>(0));
  });
}
