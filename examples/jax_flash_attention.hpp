#pragma once
// jax-ml/jax's flash attention forward pass (jax/experimental/pallas/ops/tpu/
// flash_attention.py), ported as it is written: _flash_attention_impl's grid,
// index maps and BlockSpecs, the two kernels (_flash_attention_kernel_single_
// batch and its single-step form), the optional operands (an attention bias,
// segment ids, the l and m residuals), causal masking with the index maps
// that skip blocks above the diagonal, the softmax state kept over 128 lanes.
// The Python's names are kept; `None` is refx::None.
//
//   Pallas                                  refx
//   ab=None, segment_ids=None, out None     a None parameter with the spec `none`; the body gets
//                                           refx::None (`if constexpr (is_none_v<decltype(ab)>)`)
//   q_tile_ref[batch_idx] (a tuple index)   q_tile_ref.at(b, 0)
//   pl.dslice(start, n), slice(None)        ds<n>(start), all
//   jnp.tile(x, (1, n)), l[:, :head_dim]    tile<1, n>(x), slice_in_dim<1, 0, head_dim>(l)
//   @pl.loop(..., unroll=True)              a C++ for loop (unrolled while tracing)
//   lax.select on Python ints in index maps lax_select below: ?: on integers, select on traced
//   dimension_semantics                     grid(...).dimension_semantics(...)
//
// Only the forward pass: the backward kernels (dkv, dq) are not ported.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include <refx/refx.hpp>

namespace jax_flash_attention {
using namespace refx;
using I = std::int64_t;
using i32 = std::int32_t;

inline constexpr float kDefaultMaskValue = -0.7f * std::numeric_limits<float>::max();
inline constexpr I NUM_LANES = 128;
inline constexpr I NUM_SUBLANES = 8;
inline constexpr I MIN_BLOCK_SIZE = 128;

/// A block is below or on the diagonal when its bottom left corner is.
template <class R, class C>
auto below_or_on_diag(const R& r, I r_blk_size, const C& c, I c_blk_size) {
  return ((r + 1) * r_blk_size - 1) > (c * c_blk_size);
}

/// lax.select in an index map: on integers (an unrolled grid) a C++ choice,
/// on traced indices (a rolled grid) refx::select.
template <class P, class A, class B>
auto lax_select(const P& pred, const A& a, const B& b) {
  if constexpr (std::is_same_v<P, bool>) return pred ? a : static_cast<A>(b);
  else return select(pred, a, b);
}

/// The static arguments: shapes q [batch, heads, q_seq_len, head_dim] and
/// k, v [batch, heads, kv_seq_len, head_dim], BlockSizes' forward blocks,
/// which optional operands are given, and save_residuals.
template <class T, I kBatch, I kHeads, I kQSeqLen, I kKvSeqLen, I kHeadDim, I block_b, I block_q, I block_k_major,
          I block_k, bool kHasAb = false, bool kHasSegmentIds = false, bool kSaveResiduals = false>
struct FlashAttention {
  static_assert(kKvSeqLen % block_k_major == 0 && kKvSeqLen % block_k == 0, "block_k(_major) must divide kv_seq_len");
  static_assert(block_k_major % block_k == 0, "block_k should divide block_k_major");
  static constexpr bool kSingleStep = block_k == kKvSeqLen;

  template <bool kGiven, class R>
  using Opt = std::conditional_t<kGiven, R, None>;
  using Q = HbmRef<const T, kBatch, kHeads, kQSeqLen, kHeadDim>;
  using KV = HbmRef<const T, kBatch, kHeads, kKvSeqLen, kHeadDim>;
  using Ab = Opt<kHasAb, HbmRef<const float, kBatch, kHeads, kQSeqLen, kKvSeqLen>>;
  using QSegmentIds = Opt<kHasSegmentIds, HbmRef<const i32, kBatch, kQSeqLen, NUM_LANES>>;
  using KvSegmentIds = Opt<kHasSegmentIds, HbmRef<const i32, kBatch, NUM_SUBLANES, kKvSeqLen>>;
  using O = HbmRef<T, kBatch, kHeads, kQSeqLen, kHeadDim>;
  using LM = Opt<kSaveResiduals, HbmRef<float, kBatch, kHeads, kQSeqLen, MIN_BLOCK_SIZE>>;

  struct Options {
    bool causal = false;
    float sm_scale = 1.0f;
    std::optional<float> attn_logits_soft_cap;
    float mask_value = kDefaultMaskValue;
  };

  /// _flash_attention_kernel_single_batch: one (batch, head, q block, kv
  /// block) step, the online softmax over block_k slices of the kv block.
  static void flash_attention_kernel_single_batch(I b, auto q_tile_ref, auto k_tile_ref, auto v_tile_ref,
                                                  auto ab_tile_ref, auto q_segment_ids_tile_ref,
                                                  auto kv_segment_ids_tile_ref, auto o_tile_ref, auto l_ref, auto m_ref,
                                                  auto m_scratch_ref, auto l_scratch_ref, auto acc_scratch_ref,
                                                  const Options& o) {
    constexpr I head_dim = kHeadDim;
    const auto kv_seq_idx = traced_program_id(3);
    when(kv_seq_idx == 0, [&] {  // start_new_sequence
      m_scratch_ref.at(b, 0).store(full<float, block_q, MIN_BLOCK_SIZE>(-std::numeric_limits<float>::infinity()));
      l_scratch_ref.at(b, 0).store(zeros<float, block_q, MIN_BLOCK_SIZE>());
      acc_scratch_ref.at(b, 0).store(zeros<float, block_q, head_dim>());
    });

    const auto q_seq_idx = traced_program_id(2);
    const Scalar<bool> should_run =
        o.causal ? below_or_on_diag(q_seq_idx, block_q, kv_seq_idx, block_k_major) : Scalar<bool>(true);

    when(should_run, [&] {  // run
      for (I start_k = 0; start_k < block_k_major; start_k += block_k) {  // @pl.loop(..., unroll=True)
        const auto m_prev = m_scratch_ref.at(b, 0).load();
        const auto l_prev = l_scratch_ref.at(b, 0).load();
        const auto q = q_tile_ref.at(b, 0).load();                        // [block_q, head_dim]
        const auto k = k_tile_ref.at(b, 0, ds<block_k>(start_k), all).load();  // [block_k, head_dim]

        auto s = dot<float>(q, k, trans_b);  // [block_q, block_k]

        if constexpr (!is_none_v<decltype(ab_tile_ref)>)
          s = s + cast<float>(ab_tile_ref.at(b, 0, all, ds<block_k>(start_k)).load());

        if (o.attn_logits_soft_cap) {
          const auto capped_s = tanh(s / *o.attn_logits_soft_cap);
          s = capped_s * *o.attn_logits_soft_cap;
        }
        if (o.sm_scale != 1.0f) s = s * o.sm_scale;

        std::optional<Value<bool, extents<block_q, block_k>>> mask;
        if constexpr (!is_none_v<decltype(q_segment_ids_tile_ref)>) {
          static_assert(block_k % NUM_LANES == 0, "kv block size must be a multiple of NUM_LANES");
          constexpr I repeats = block_k / NUM_LANES;
          const auto q_segment_ids = tile<1, repeats>(q_segment_ids_tile_ref.at(b).load());  // [block_q, block_k]
          const auto kv_segment_ids =
              kv_segment_ids_tile_ref.at(b, ds<1>(0), ds<block_k>(start_k)).load();  // [1, block_k]
          mask = q_segment_ids == kv_segment_ids;
        }
        if (o.causal) {
          auto row_ids = iota<i32, block_q, block_k>(0);
          row_ids = row_ids + q_seq_idx * static_cast<i32>(block_q);
          auto col_ids = iota<i32, block_q, block_k>(1);
          col_ids = col_ids + kv_seq_idx * static_cast<i32>(block_k_major) + static_cast<i32>(start_k);
          const auto causal_mask = col_ids <= row_ids;
          mask = mask ? *mask & causal_mask : causal_mask;
        }
        if (mask) s = s + select(*mask, 0.0f, o.mask_value);

        const auto m_curr = reduce_max<1>(s, keepdims);  // Row max, shape [block_q, 1].
        const auto m_next = max(m_prev, m_curr);         // Shape [block_q, 128].

        static_assert(block_k % MIN_BLOCK_SIZE == 0, "block_k should be a multiple of MIN_BLOCK_SIZE");
        constexpr I block_k_repeats = block_k / MIN_BLOCK_SIZE;
        const auto p = exp(s - tile<1, block_k_repeats>(m_next));

        const auto alpha = exp(m_prev - m_next);  // Shape [block_q, 128].
        const auto l_corr = alpha * l_prev;
        const auto l_next = reduce_sum<1>(p, keepdims) + l_corr;  // Shape [block_q, 128]

        constexpr I head_dim_repeats = head_dim / MIN_BLOCK_SIZE;
        static_assert(head_dim % MIN_BLOCK_SIZE == 0 || head_dim_repeats == 0,
                      "head_dim should be a multiple of MIN_BLOCK_SIZE if larger");
        const auto l_broadcast = [](const auto& l) {
          if constexpr (kHeadDim / MIN_BLOCK_SIZE == 0) return slice_in_dim<1, 0, kHeadDim>(l);
          else return tile<1, kHeadDim / MIN_BLOCK_SIZE>(l);
        };
        l_scratch_ref.at(b, 0).store(l_next);
        m_scratch_ref.at(b, 0).store(m_next);

        const auto l_next_inv_safe = select(l_next == 0.0f, 1.0f, 1.0f / l_next);
        acc_scratch_ref.at(b, 0) *= l_broadcast(l_corr * l_next_inv_safe);
        const auto v = v_tile_ref.at(b, 0, ds<block_k>(start_k), all).load();
        const auto o_curr = dot<float>(cast<T>(p), v);
        acc_scratch_ref.at(b, 0) += o_curr * l_broadcast(l_next_inv_safe);
      }
    });

    when(kv_seq_idx == static_cast<i32>(kKvSeqLen / block_k_major - 1), [&] {  // store_output
      o_tile_ref.at(b, 0).store(cast<typename decltype(o_tile_ref)::value_type>(acc_scratch_ref.at(b, 0).load()));
      if constexpr (!is_none_v<decltype(l_ref)>) l_ref.at(b, 0).store(l_scratch_ref.at(b, 0).load());
      if constexpr (!is_none_v<decltype(m_ref)>) m_ref.at(b, 0).store(m_scratch_ref.at(b, 0).load());
    });
  }

  /// _flash_attention_kernel_single_batch_single_step: the whole kv sequence
  /// in one block, a plain softmax.
  static void flash_attention_kernel_single_batch_single_step(I b, auto q_tile_ref, auto k_tile_ref, auto v_tile_ref,
                                                              auto ab_tile_ref, auto q_segment_ids_tile_ref,
                                                              auto kv_segment_ids_tile_ref, auto o_tile_ref,
                                                              auto l_ref, auto m_ref, const Options& o) {
    const auto q = q_tile_ref.at(b, 0).load();  // [block_q, head_dim]
    const auto k = k_tile_ref.at(b, 0).load();  // [block_k, head_dim]
    auto s = dot<float>(q, k, trans_b);          // [block_q, block_k]

    if constexpr (!is_none_v<decltype(ab_tile_ref)>) s = s + cast<float>(ab_tile_ref.at(b, 0).load());
    if (o.attn_logits_soft_cap) {
      const auto capped_s = tanh(s / *o.attn_logits_soft_cap);
      s = capped_s * *o.attn_logits_soft_cap;
    }
    if (o.sm_scale != 1.0f) s = s * o.sm_scale;

    std::optional<Value<bool, extents<block_q, block_k>>> mask;
    if constexpr (!is_none_v<decltype(q_segment_ids_tile_ref)>) {
      static_assert(block_k % NUM_LANES == 0, "kv block size must be a multiple of NUM_LANES");
      const auto q_segment_ids = tile<1, block_k / NUM_LANES>(q_segment_ids_tile_ref.at(b).load());
      const auto kv_segment_ids = kv_segment_ids_tile_ref.at(b, ds<1>(0)).load();  // [1, block_k]
      mask = q_segment_ids == kv_segment_ids;
    }
    if (o.causal) {
      const auto q_seq_idx = traced_program_id(2);
      const auto row_ids = iota<i32, block_q, block_k>(0) + q_seq_idx * static_cast<i32>(block_q);
      const auto col_ids = iota<i32, block_q, block_k>(1);
      const auto causal_mask = col_ids <= row_ids;
      mask = mask ? *mask & causal_mask : causal_mask;
    }
    if (mask) s = s + select(*mask, 0.0f, o.mask_value);

    const auto m = reduce_max<1>(s, keepdims);
    auto p = exp(s - m);
    const auto l = reduce_sum<1>(p, keepdims);
    p = p / l;

    if constexpr (!is_none_v<decltype(m_ref)>) m_ref.at(b, 0).store(broadcast_to<block_q, MIN_BLOCK_SIZE>(m));
    if constexpr (!is_none_v<decltype(l_ref)>) l_ref.at(b, 0).store(broadcast_to<block_q, MIN_BLOCK_SIZE>(l));

    const auto v = v_tile_ref.at(b, 0).load();
    o_tile_ref.at(b, 0).store(cast<typename decltype(o_tile_ref)::value_type>(dot<float>(cast<T>(p), v)));
  }

  /// _flash_attention_kernel: each batch row of the block, by the kernel
  /// that fits (the single-step one when one kv block is the whole sequence).
  static void flash_attention_kernel(const Options& o, auto... refs) {
    for (I batch_idx = 0; batch_idx < block_b; ++batch_idx) {
      if constexpr (kSingleStep) flash_attention_kernel_single_batch_single_step(batch_idx, refs..., o);
      else flash_attention_kernel_single_batch(batch_idx, refs..., o);
    }
  }

  /// _flash_attention_impl: the pallas_call, a kernel over (q, k, v, ab,
  /// q_segment_ids, kv_segment_ids) returning (o[, l, m]); ab and the
  /// segment ids are parameters only when given, l and m only with
  /// save_residuals.
  static auto flash_attention(const Options& o = {}) {
    const bool causal = o.causal;
    const auto q_index_map = [](auto batch_index, auto head_index, auto q_seq_index, auto) {
      return std::tuple{batch_index, head_index, q_seq_index, I{0}};
    };
    const auto kv_index_map = [causal](auto batch_index, auto head_index, auto q_seq_index, auto kv_seq_index) {
      // If the kv block is skipped, prefetch the next valid kv block, i.e. the
      // 0th one to be used for the next block_q rows.
      const auto next_kv_index =
          causal ? lax_select(below_or_on_diag(q_seq_index, block_q, kv_seq_index, block_k_major), kv_seq_index, 0)
                 : kv_seq_index;
      return std::tuple{batch_index, head_index, next_kv_index, I{0}};
    };
    const auto ab_index_map = [causal](auto batch_index, auto head_index, auto q_seq_index, auto kv_seq_index) {
      if (!causal) return std::tuple{batch_index, head_index, q_seq_index, kv_seq_index};
      const auto should_run = below_or_on_diag(q_seq_index, block_q, kv_seq_index, block_k_major);
      // If the ab block is skipped, prefetch the next valid ab block.
      const auto next_q_index = lax_select(
          should_run, q_seq_index,
          lax_select(q_seq_index == (kQSeqLen / block_q) - 1, decltype(q_seq_index)(0), q_seq_index + 1));
      const auto next_kv_index = lax_select(should_run, kv_seq_index, 0);
      return std::tuple{batch_index, head_index, next_q_index, next_kv_index};
    };
    const auto o_index_map = q_index_map;
    const auto lm_index_map = q_index_map;
    const auto q_segment_ids_index_map = [](auto batch_index, auto, auto q_seq_index, auto) {
      return std::tuple{batch_index, q_seq_index, I{0}};
    };
    const auto kv_segment_ids_index_map = [causal](auto batch_index, auto, auto q_seq_index, auto kv_seq_index) {
      const auto next_kv_index =
          causal ? lax_select(below_or_on_diag(q_seq_index, block_q, kv_seq_index, block_k_major), kv_seq_index, 0)
                 : kv_seq_index;
      return std::tuple{batch_index, I{0}, next_kv_index};
    };

    const auto spec_if = [](auto given, auto spec) {
      if constexpr (decltype(given)::value) return spec;
      else return none;
    };
    const auto ab_block_spec = spec_if(std::bool_constant<kHasAb>{}, block<block_b, 1, block_q, block_k_major>(ab_index_map));
    const auto q_segment_ids_spec =
        spec_if(std::bool_constant<kHasSegmentIds>{}, block<block_b, block_q, NUM_LANES>(q_segment_ids_index_map));
    const auto kv_segment_ids_spec = spec_if(std::bool_constant<kHasSegmentIds>{},
                                             block<block_b, NUM_SUBLANES, block_k_major>(kv_segment_ids_index_map));
    const auto lm_spec =
        spec_if(std::bool_constant<kSaveResiduals>{}, block<block_b, 1, block_q, MIN_BLOCK_SIZE>(lm_index_map));

    const auto g = grid((kBatch + block_b - 1) / block_b, kHeads, (kQSeqLen + block_q - 1) / block_q,
                        kKvSeqLen / block_k_major)
                       .dimension_semantics(parallel, parallel, parallel, arbitrary);
    const auto kernel = [o](auto... refs) { flash_attention_kernel(o, refs...); };
    const auto call = [&](auto... scratch) {
      return pipeline_kernel<Q, KV, KV, Ab, QSegmentIds, KvSegmentIds, O, LM, LM>(
          g, kernel, block<block_b, 1, block_q, kHeadDim>(q_index_map),
          block<block_b, 1, block_k_major, kHeadDim>(kv_index_map),
          block<block_b, 1, block_k_major, kHeadDim>(kv_index_map), ab_block_spec, q_segment_ids_spec,
          kv_segment_ids_spec, block<block_b, 1, block_q, kHeadDim>(o_index_map), lm_spec, lm_spec, scratch...);
    };
    if constexpr (kSingleStep) {
      return call();
    } else {
      using MScratch = VmemRef<float, block_b, 1, block_q, MIN_BLOCK_SIZE>;
      return call(scratch<MScratch>(), scratch<MScratch>(), scratch<VmemRef<float, block_b, 1, block_q, kHeadDim>>());
    }
  }
};
}  // namespace jax_flash_attention
