// Misuse: a pipeline_kernel body taking its scalar operand last, after the
// blocks (Pallas passes the scalar prefetch refs first: kernel(table_ref,
// x_ref, o_ref)); refx says so rather than calling a block read-only.
// refx-expect: refx: pipeline_kernel's body takes its scalar operands (the Smem Refs) first
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;
using I = std::int64_t;
using Table = SmemRef<const std::int32_t, 8>;

void gather_rows() {
  (void)pipeline_kernel<Table, HbmRef<const float, 4, 128>, HbmRef<float, 8, 128>>(
      grid(8), [](VmemRef<const float, 1, 128> x, VmemRef<float, 1, 128> z, Table) { z.store(x.load()); },
      block<1, 128>([](I i, Table table) { return std::make_tuple(table.at(i).load(), I{0}); }),
      block<1, 128>([](I i, Table) {
        return std::array{i, I{0}};
      }));
}
