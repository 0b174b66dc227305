// Misuse: an unsigned loop bound (e.g. from .size() cast to unsigned) for the
// i32 loop index.
// refx-expect: refx: an unsigned integer where a signed integer of the same width is expected
#include <refx/refx.hpp>

using namespace refx;

void loop(unsigned n) {
  trace([&](VmemRef<float, 8, 128> y) {
    fori_loop(0, n, [&](Scalar<std::int32_t> i) { y.at(i, all).store(y.at(i, all).load() * 2.0f); });
  });
}
