// Misuse: a BlockSpec given for the scalar operand too (BlockSpecs are for
// the Hbm parameters only; the scalar operand reaches every index map).
// refx-expect: refx: pipeline_kernel needs one BlockSpec (or any()) per Hbm parameter, in order (then its scratch<H>()
// operands)
#include <refx/refx.hpp>

using namespace refx;
using I = std::int64_t;

void spec_for_the_table() {
  using Table = SmemRef<const std::int32_t, 4>;
  (void)pipeline_kernel<Table, HbmRef<const float, 4, 8>, HbmRef<float, 4, 8>>(
      grid(4), [](Table, VmemRef<const float, 1, 8> x, VmemRef<float, 1, 8> z) { z.store(x.load()); },
      block<1>([](I i, Table) { return i; }), block<1, 8>([](I i, Table) { return std::array{i, I{0}}; }),
      block<1, 8>([](I i, Table) { return std::array{i, I{0}}; }));
}
