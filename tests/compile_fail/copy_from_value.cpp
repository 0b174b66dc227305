// Misuse: a copy whose source is a Value (copies move data between Refs).
// refx-expect: refx: a copy
// refx-expect: source and destination must be Refs (a Value is immutable; store it into a Ref first)
#include <refx/refx.hpp>

using namespace refx;

void write_back() {
  trace([](VmemRef<const float, 128> x, HbmRef<float, 128> out) {
    sync_copy(x.load() * 2.0f, out);
  });
}
