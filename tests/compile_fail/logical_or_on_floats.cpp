// Misuse: | on float Values (refx's & and | are logical, on bool Values).
// refx-expect: refx: & and | combine bool values (comparisons)
#include <refx/refx.hpp>

using namespace refx;

void either() {
  trace([](VmemRef<const float, 128> a, VmemRef<const float, 128> b, VmemRef<float, 128> y) {
    y.store(a.load() | b.load());
  });
}
