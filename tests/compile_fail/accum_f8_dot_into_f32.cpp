// Misuse: an fp8 dot accumulated into an f32 scratch Ref
// (acc_ref[...] += jnp.dot(a, b, preferred_element_type=jnp.float32) ported
// without the preferred element type): dot(a, b) of f8e4m3fn operands is an
// f8e4m3fn Value, its sums rounded to 8 bits.
// refx-expect: refx: a bf16, f16 or fp8 Value is not widened implicitly into an f32 Ref
// refx-expect: if it is a dot's result, write dot<float>(a, b)
#include <refx/refx.hpp>

using namespace refx;

void quantised_matmul() {
  trace([](VmemRef<const f8e4m3fn, 8, 128> x, VmemRef<const f8e4m3fn, 128, 128> w, VmemRef<float, 8, 128> acc) {
    auto a = x.load();
    auto b = w.load();
    acc += dot(a, b);
  });
}
