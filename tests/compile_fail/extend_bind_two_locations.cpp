// Misuse: two source locations in one refx::extend::bind.
// refx-expect: refx::extend::bind: pass at most one source location
#include <source_location>

#include <refx/extend.hpp>
#include <refx/refx.hpp>

using namespace refx;

void twice() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    const auto here = std::source_location::current();
    auto v = x.load();
    y.store(extend::bind<float, extents<128>>(prim::add, v, v, here, here));
  });
}
