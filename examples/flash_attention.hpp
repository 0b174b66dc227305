#pragma once
// Flash attention forward (one head), written the way the Pallas TPU kernels
// write it: a grid over (query block i, key/value block j), the query block
// and the output block fixed along j, and an online softmax whose running
// row maximum m, row sum l and output accumulator acc live in f32 Vmem
// scratch across the j steps. Each step:
//
//   s     = q_i k_j^T / sqrt(d)                    (f32 scores, 128 x 256)
//   m_new = max(m, rowmax(s))                      keepdims: <128, 1>
//   p     = exp(s - m_new)                         m_new broadcast along the row
//   alpha = exp(m - m_new)                         rescales what was summed so far
//   l     = alpha * l + rowsum(p)
//   acc   = alpha * acc + p v_j                    (p rounded to T for the MXU, as Pallas does)
//
// and the last j step writes acc / l. Used by examples/flash_attention.cpp
// (checked against a host reference) and bench/flash_attention.cpp.

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include <refx/refx.hpp>

namespace flash {
using namespace refx;
using I = std::int64_t;

inline constexpr I kSeqQ = 1024, kSeqK = 4096, kHead = 128;  // q: 1024 x 128, k and v: 4096 x 128
inline constexpr I kBq = 128, kBk = 256;                     // block sizes along q and along k / v

/// The kernel over Hbm operands of element type T (f32, or bf16 with f32 scratch).
template <class T>
void attention(HbmRef<const T, kSeqQ, kHead> q, HbmRef<const T, kSeqK, kHead> k, HbmRef<const T, kSeqK, kHead> v,
               HbmRef<T, kSeqQ, kHead> o) {
  const auto body = [](VmemRef<const T, kBq, kHead> qb, VmemRef<const T, kBk, kHead> kb,
                       VmemRef<const T, kBk, kHead> vb, VmemRef<T, kBq, kHead> ob, VmemRef<float, kBq, 1> m,
                       VmemRef<float, kBq, 1> l, VmemRef<float, kBq, kHead> acc) {
    if (program_id(1) == 0) {
      m.store(-std::numeric_limits<float>::infinity());
      l.store(0.0f);
      acc.store(0.0f);
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(kHead));
    // [snippet:online-softmax]
    const auto s = dot<float>(qb.load(), kb.load(), trans_b) * scale;  // <128, 256>
    const auto m_prev = m.load();                                      // <128, 1>
    const auto m_new = max(m_prev, reduce_max<1>(s, keepdims));        // jnp.max(s, axis=1, keepdims=True)
    const auto p = exp(s - m_new);                                     // m_new stretches along each row
    const auto alpha = exp(m_prev - m_new);
    l.store(alpha * l.load() + reduce_sum<-1>(p, keepdims));            // axes count from the end when negative
    acc.store(alpha * acc.load() + dot<float>(cast<T>(p), vb.load()));  // alpha <128, 1> scales acc <128, 128>
    m.store(m_new);
    // [/snippet]
    if (program_id(1) == num_programs(1) - 1) ob.store(cast<T>(acc.load() / l.load()));
  };
  emit_pipeline(grid(kSeqQ / kBq, kSeqK / kBk), body)(
      in(q, block<kBq, kHead>([](I i, I) {
           return std::array{i, I{0}};
         })),
      in(k, block<kBk, kHead>([](I, I j) {
           return std::array{j, I{0}};
         })),
      in(v, block<kBk, kHead>([](I, I j) {
           return std::array{j, I{0}};
         })),
      out(o, block<kBq, kHead>([](I i, I) {
            return std::array{i, I{0}};
          })),
      scratch<VmemRef<float, kBq, 1>>(), scratch<VmemRef<float, kBq, 1>>(), scratch<VmemRef<float, kBq, kHead>>());
}

/// The inputs: smooth values in [-1, 1], different per operand.
inline float input_value(int operand, I e) {
  return std::sin(0.37f * static_cast<float>(e % 1009) + 1.3f * static_cast<float>(operand)) *
         std::cos(0.011f * static_cast<float>(e / 128 + operand));
}

}  // namespace flash
