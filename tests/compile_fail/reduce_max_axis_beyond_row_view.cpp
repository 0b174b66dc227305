// Misuse: a row maximum written for the whole tile (axis 1 of [rows, lanes])
// but applied to one row's view, which has rank 1.
// refx-expect: refx: reduce_max axis is out of range for this value's rank (axes go from 0 to rank - 1, or from -rank
// to -1 counting from the end)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void row_maxima() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8> m) {
    fori_loop(0, 8, [&](Scalar<std::int32_t> r) {
      const auto row = x.at(r, all).load();
      m.at(r).store(reduce_max<1>(row));
    });
  });
}
