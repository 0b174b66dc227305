// Misuse: a C++ for loop bounded by a traced Scalar (axis_size is only known
// when the kernel runs on a mesh); `i < n - 1` is a Value<bool>.
// refx-expect: refx: a traced value has no value while the kernel is traced, so it cannot steer C++ control flow
// refx-expect: fori_loop(lo, hi, [&](Scalar<std::int32_t> i) { ... })
// refx-expect: mesh_axis_size("x")
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void ring_steps() {
  trace([](VmemRef<float, 128> acc) {
    for (int i = 0; i < axis_size("x") - 1; ++i) {
      acc.store(acc.load() * 2.0f);
    }
  });
}
