// Misuse: two Attrs{...} in one refx::extend::bind (pass them in one Attrs).
// refx-expect: refx::extend::bind: pass all attributes in one Attrs{...}
#include <refx/extend.hpp>
#include <refx/refx.hpp>

using namespace refx;

void row_sum() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8> y) {
    y.store(extend::bind<float, extents<8>>(prim::reduce_sum, x.load(), extend::Attrs{1}, extend::Attrs{0}));
  });
}
