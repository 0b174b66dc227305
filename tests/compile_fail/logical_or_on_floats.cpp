// Misuse: | on float Values (& | ^ are logical on bool Values, bitwise on integers).
// refx-expect: refx: & | ^ combine bool values (comparisons) or integer values (bitwise), not floating point
#include <refx/refx.hpp>

using namespace refx;

void either() {
  trace([](VmemRef<const float, 128> a, VmemRef<const float, 128> b, VmemRef<float, 128> y) {
    y.store(a.load() | b.load());
  });
}
