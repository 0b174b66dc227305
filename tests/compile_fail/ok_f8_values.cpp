// Positive control for the fp8 misuse checks: literals (rounded into the
// f8 type), an f8 Scalar from a float, casts both ways, and dot with an f32
// accumulator, with the result types they promise.
#include <refx/refx.hpp>

#include <type_traits>

using namespace refx;

void quantised_matmul() {
  trace([](VmemRef<const f8e4m3fn, 8, 16> a, VmemRef<const f8e4m3fn, 8, 16> b, VmemRef<const float, 8, 8> scale,
           VmemRef<float, 8, 8> y, VmemRef<f8e5m2, 8, 8> q) {
    const Scalar<f8e4m3fn> k = 0.5f;
    const auto scaled = a.load() * k + 1.5f;
    static_assert(std::is_same_v<decltype(scaled), const Value<f8e4m3fn, extents<8, 16>>>);
    auto acc = dot<float>(scaled, b.load(), trans_b);
    static_assert(std::is_same_v<decltype(acc), Value<float, extents<8, 8>>>);
    y.store(acc * scale.load());
    q.store(cast<f8e5m2>(y.load()));
    static_assert(std::is_same_v<decltype(dot(a.load(), b.load(), trans_b)), Value<f8e4m3fn, extents<8, 8>>>);
  });
}
