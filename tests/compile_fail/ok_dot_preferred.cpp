// Positive control for the dot misuse checks: a preferred element type, an
// integer accumulation and trans_b, with the result types they promise.
#include <refx/refx.hpp>

#include <cstdint>
#include <type_traits>

using namespace refx;

void attention_scores() {
  trace([](VmemRef<const bf16, 8, 128> q, VmemRef<const bf16, 16, 128> k, VmemRef<float, 8, 16> s,
           VmemRef<const std::int8_t, 8, 128> x, VmemRef<std::int32_t, 8, 8> acc) {
    auto scores = dot<float>(q.load(), k.load(), trans_b);
    static_assert(std::is_same_v<decltype(scores), Value<float, extents<8, 16>>>);
    s.store(scores);
    acc.store(dot<std::int32_t>(x.load(), x.load(), trans_b));
    static_assert(std::is_same_v<decltype(dot(q.load(), k.load(), trans_b)), Value<bf16, extents<8, 16>>>);
  });
}
