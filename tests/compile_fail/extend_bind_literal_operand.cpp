// Misuse: passing a C++ literal as an operand of refx::extend::bind (operands
// are Values, Refs, Attrs{...} and a source location).
// refx-expect: refx::extend::bind: operands are Values, Refs, refx::extend::Attrs{...} and a std::source_location
#include <refx/extend.hpp>
#include <refx/refx.hpp>

using namespace refx;

void scale() {
  trace([](VmemRef<const float, 128> x, VmemRef<float, 128> y) {
    y.store(extend::bind<float, extents<128>>(prim::mul, x.load(), 2.0f));
  });
}
