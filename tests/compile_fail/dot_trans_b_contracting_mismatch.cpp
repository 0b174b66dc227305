// Misuse: a @ b.T with a (8, 128) and b (128, 64): with trans_b, b's columns
// are contracted, so b must be (n, 128).
// refx-expect: refx: dot's contracting extents differ
#include <refx/refx.hpp>

using namespace refx;

void scores() {
  trace([](VmemRef<const float, 8, 128> q, VmemRef<const float, 128, 64> k, VmemRef<float, 8, 128> s) {
    s.store(dot(q.load(), k.load(), trans_b));  // k must be (n, 128)
  });
}
