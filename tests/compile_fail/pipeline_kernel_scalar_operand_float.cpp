// Misuse: a float Smem parameter as a scalar operand of pipeline_kernel
// (scalar operands hold block indices: integers).
// refx-expect: refx: pipeline_kernel's scalar operands are read-only integer Smem Refs (SmemRef<const std::int32_t, N>)
#include <refx/refx.hpp>

using namespace refx;
using I = std::int64_t;

void float_table() {
  (void)pipeline_kernel<SmemRef<const float, 4>, HbmRef<const float, 4, 8>, HbmRef<float, 4, 8>>(
      grid(4), [](SmemRef<const float, 4>, VmemRef<const float, 1, 8> x, VmemRef<float, 1, 8> z) { z.store(x.load()); },
      block<1, 8>([](I i, SmemRef<const float, 4>) { return std::array{i, I{0}}; }),
      block<1, 8>([](I i, SmemRef<const float, 4>) { return std::array{i, I{0}}; }));
}
