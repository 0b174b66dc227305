// Misuse: a scratch<H>() operand before the last BlockSpec.
// refx-expect: refx: pipeline_kernel's scratch<H>() operands come after all its BlockSpecs
#include <refx/refx.hpp>

using namespace refx;
using I = std::int64_t;

void scratch_first() {
  (void)pipeline_kernel<HbmRef<const float, 4, 8>, HbmRef<float, 4, 8>>(
      grid(4), [](VmemRef<const float, 1, 8> x, VmemRef<float, 1, 8> acc, VmemRef<float, 1, 8> z) { z.store(x.load()); },
      block<1, 8>([](I i) { return std::array{i, I{0}}; }), scratch<VmemRef<float, 1, 8>>(),
      block<1, 8>([](I i) { return std::array{i, I{0}}; }));
}
