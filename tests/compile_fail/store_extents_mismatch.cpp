// Misuse: storing a Value whose static extents disagree with the Ref's
// (Value<float, extents<4>> into Ref<float, extents<8>>).
// refx-expect: static extents disagree with the Ref view
#include <refx/refx.hpp>

using namespace refx;

void copy_half() {
  trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    Value<float, extents<4>> head = x.at(ds<4>(0)).load();
    y.store(head);  // y has 8 elements
  });
}
