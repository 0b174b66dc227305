// Misuse: a Ref whose elements are Refs.
// refx-expect: refx: a Ref cannot hold Refs (no Ref of Refs); pass the inner Refs separately
#include <refx/refx.hpp>

using namespace refx;

using Buf = VmemRef<float, 128>;

void pick_buffer() {
  trace([](Ref<Buf, extents<2>> buffers, VmemRef<float, 128> out) {
    out.store(0.0f);
    (void)buffers;
  });
}
