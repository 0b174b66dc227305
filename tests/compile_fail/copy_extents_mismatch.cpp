// Misuse: a copy between Refs whose static extents differ.
// refx-expect: source and destination have different static extents
#include <refx/refx.hpp>

using namespace refx;

void fetch_tile() {
  trace([](HbmRef<const float, 8, 128> x, VmemRef<float, 4, 128> y) {
    sync_copy(x, y);  // needs x.at(ds<4>(0), all)
  });
}
