// Misuse: Pallas' `pl.BlockSpec((1, 128), lambda i, table: (table[i], 0))`
// ported with the scalar operand first, (table, i): a pipeline_kernel index
// map takes its grid indices first, then the scalar operands.
// refx-expect: refx: a BlockSpec's index map takes the grid indices first, then pipeline_kernel's scalar operands
// refx-expect: not (table, i)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;
using I = std::int64_t;
using Table = SmemRef<const std::int32_t, 8>;

void gather_rows() {
  (void)pipeline_kernel<Table, HbmRef<const float, 4, 128>, HbmRef<float, 8, 128>>(
      grid(8), [](Table, VmemRef<const float, 1, 128> x, VmemRef<float, 1, 128> z) { z.store(x.load()); },
      block<1, 128>([](Table table, I i) { return std::make_tuple(table.at(i).load(), I{0}); }),
      block<1, 128>([](I i, Table) {
        return std::array{i, I{0}};
      }));
}
