// Misuse: a Ref of an unsupported element type (uint16_t).
// refx-expect: element type must be one of bool, i8, u8, i32, u32, i64, f8e4m3fn, f8e5m2, bf16, f16, f32, f64
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void shorts() {
  trace([](VmemRef<const std::uint16_t, 64> x, VmemRef<float, 64> y) {
    (void)x;
    y.store(0.0f);
  });
}
