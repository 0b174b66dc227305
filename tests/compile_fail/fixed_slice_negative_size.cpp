// Misuse: ds<N>(start) with a negative static size.
// refx-expect: refx: ds<N> needs N >= 0
#include <refx/refx.hpp>

using namespace refx;

void window() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    y.store(x.load());
    auto tail = x.at(ds<-8>(120)).load();
    (void)tail;
  });
}
