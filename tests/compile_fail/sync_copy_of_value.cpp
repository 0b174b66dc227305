// Misuse: sync_copy from a Value.
// refx-expect: refx: a copy's source and destination must be Refs (a Value is immutable; store it into a Ref first)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void fetch() {
  trace([](VmemRef<const float, 128> x, HbmRef<float, 128> y) { sync_copy(x.load() * 2.0f, y); });
}
