// Misuse: indexing with something that is neither an integer, an integer
// Scalar, ds(...), ds<N>(...) nor refx::all (here: a float Scalar).
// refx-expect: refx: .at(...) takes integers, integer Scalars, ds(start, size[, stride]), ds<N>(start) or refx::all
#include <refx/refx.hpp>

using namespace refx;

void gather_row() {
  trace([](SmemRef<const float> row_f, VmemRef<const float, 8, 128> table, VmemRef<float, 128> out) {
    auto row = row_f.load();  // a Scalar<float>: not usable as an index
    out.store(table.at(row, all).load());
  });
}
