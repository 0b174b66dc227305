// Misuse: a bias row added to a block without aligning the ranks (numpy
// would add the leading dimension; lax and refx want expand_dims<0>(b)).
// refx-expect: refx: operands of an elementwise op must have equal ranks (or one must be a scalar)
#include <refx/refx.hpp>

using namespace refx;

void add_bias() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<const float, 128> b, VmemRef<float, 8, 128> y) {
    y.store(x.load() + b.load());
  });
}
