// Misuse: dot of a vector and a matrix (dot multiplies two rank-2 Values).
// refx-expect: refx: dot multiplies two rank-2 values
#include <refx/refx.hpp>

using namespace refx;

void matvec() {
  trace([](VmemRef<const float, 128> v, VmemRef<const float, 128, 64> w, VmemRef<float, 64> y) {
    y.store(dot(v.load(), w.load()));
  });
}
