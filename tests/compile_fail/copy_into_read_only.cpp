// Misuse: a copy whose destination is a read-only Ref<const T>.
// refx-expect: refx: cannot copy into a read-only Ref<const T>; the destination must be writable
#include <refx/refx.hpp>

using namespace refx;

void write_back() {
  trace([](VmemRef<float, 128> tile, HbmRef<const float, 128> out) {
    tile.store(1.0f);
    sync_copy(tile, out);
  });
}
