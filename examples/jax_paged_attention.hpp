#pragma once
// jax-ml/jax's paged attention (jax/experimental/pallas/ops/tpu/
// paged_attention/paged_attention_kernel.py), ported as it is written: the
// same grid, BlockSpecs, index maps, scalar operands, scratch and semaphore,
// the same names, one C++ function per Python one. Decode attention of one
// query token per sequence over keys and values kept in pages of a shared
// pool, found through a page table; grouped query heads share a kv head.
//
//   Pallas                                     refx
//   PrefetchScalarGridSpec(num_scalar_prefetch  the kernel's Smem parameters, first: lengths,
//     =4): lengths, page_indices, buffer_index, page_indices, then buffer_index and step, which
//     step                                     the body writes (inputs still: zeros are passed)
//   BlockSpec(index_map, (None, heads, dim))   block<squeezed, kGroup, kHeadDim>(index_map)
//   BlockSpec(memory_space=ANY)                any(): the body gets the Hbm Ref and copies pages
//   m, l: out_shape (..., 1), q's block        the same: an output block may pad past its array
//   scratch_shapes VMEM(...), SemaphoreType.DMA scratch<VmemRef<...>>(), scratch<DmaSemaphore>()
//   lax.cond(p, f, g) returning a tuple        cond(p, f, g) returning a std::tuple of Scalars
//   lengths_ref[b], buffer_index_ref[0] = x    the same
//   pl.when, lax.fori_loop, jnp.where          when, fori_loop, select
//   megacore_mode, dimension_semantics         the same, on Mesh{...}.with_cores(2)
//
// One change from the Python: compute_block_indices reads
// lengths_ref[next_b] with next_b == batch_size on the last sequence (the
// logical_and discards it; on a TPU, SMEM past the array holds whatever lies
// there). refx checks Smem indices at run time, so the port clamps that
// index to the last sequence; the result of the logical_and is unchanged.

#include <array>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include <refx/refx.hpp>

namespace jax_paged_attention {
using namespace refx;
using I = std::int64_t;
using i32 = std::int32_t;
using S32 = Scalar<i32>;

/// DEFAULT_MASK_VALUE = -0.7 * float32 max.
inline constexpr float kDefaultMaskValue = -0.7f * std::numeric_limits<float>::max();

enum class MegacoreMode { none, kv_head, batch };

/// paged_attention's static arguments and shapes: q [batch, heads, head_dim],
/// k_pages / v_pages [kv_heads, total_pages, page_size, head_dim],
/// page_indices [batch, pages_per_sequence].
template <class T, I kBatch, I kHeads, I kKvHeads, I kHeadDim, I kTotalPages, I kPageSize, I kPagesPerSequence,
          I kPagesPerComputeBlock>
struct PagedAttention {
  static_assert(kHeads % kKvHeads == 0, "Number of Q heads must be divisible by number of KV heads");
  static_assert(kPagesPerSequence % kPagesPerComputeBlock == 0,
                "pages_per_compute_block must divide pages_per_sequence");
  static constexpr I kGroup = kHeads / kKvHeads;
  // The Python reshapes q to 4-D when the group is not a multiple of 8 (a
  // TPU layout hint); this port takes the 3-D path only.
  static_assert(kGroup % 8 == 0, "this port takes num_heads // num_kv_heads a multiple of 8 (the 3-D q path)");

  using Lengths = SmemRef<const i32, kBatch>;
  using PageIndices = SmemRef<const i32, kBatch * kPagesPerSequence>;
  using Counter = SmemRef<i32, 1>;
  using Q = HbmRef<const T, kBatch, kHeads, kHeadDim>;
  using Pages = HbmRef<const T, kKvHeads, kTotalPages, kPageSize, kHeadDim>;
  using O = HbmRef<T, kBatch, kHeads, kHeadDim>;
  using ML = HbmRef<float, kBatch, kHeads, 1>;
  using QBlock = VmemRef<const T, kGroup, kHeadDim>;
  using OBlock = VmemRef<T, kGroup, kHeadDim>;
  using MLBlock = VmemRef<float, kGroup, kHeadDim>;
  using KVBuffer = VmemRef<T, 2, kPagesPerComputeBlock, kPageSize, kHeadDim>;
  using ProgramIds = std::tuple<S32, S32, S32, S32>;

  /// MultiPageAsyncCopyDescriptor: the copies of num_pages_to_load pages,
  /// picked by page_indices, from one kv head's pages into a Vmem buffer.
  class MultiPageAsyncCopyDescriptor {
   public:
    MultiPageAsyncCopyDescriptor(const Pages& pages_hbm_ref, const VmemRef<T, kPagesPerComputeBlock, kPageSize, kHeadDim>& vmem_buffer,
                                 const DmaSemaphore& sem, const PageIndices& page_indices,
                                 const S32& page_indices_start_offset, I num_pages_to_load, const S32& head_index)
        : vmem_buffer_(vmem_buffer) {
      const auto pages = pages_hbm_ref.at(head_index);
      for (I i = 0; i < num_pages_to_load; ++i) {
        const auto page_index = page_indices[page_indices_start_offset + static_cast<i32>(i)];
        async_copies_.push_back(make_async_copy(pages.at(page_index), vmem_buffer_.at(i), sem));
      }
    }
    /// Starts the async copies.
    void start() const {
      for (const AsyncCopy& async_copy : async_copies_) async_copy.start();
    }
    /// Waits for the copies and returns the buffer as f32 (pages * page_size, head_dim).
    Value<float, extents<kPagesPerComputeBlock * kPageSize, kHeadDim>> wait_and_get_loaded() const {
      for (const AsyncCopy& async_copy : async_copies_) async_copy.wait();
      return reshape<kPagesPerComputeBlock * kPageSize, kHeadDim>(cast<float>(vmem_buffer_.load()));
    }

   private:
    VmemRef<T, kPagesPerComputeBlock, kPageSize, kHeadDim> vmem_buffer_;
    std::vector<AsyncCopy> async_copies_;
  };

  /// paged_flash_attention_kernel: one block of pages_per_compute_block
  /// pages for (batch b, kv head h), prefetching the next non-empty block.
  static void paged_flash_attention_kernel(Lengths lengths_ref, PageIndices page_indices_ref, Counter buffer_index_ref,
                                           Counter step_ref, QBlock q_ref, Pages k_pages_hbm_ref, Pages v_pages_hbm_ref,
                                           OBlock o_ref, MLBlock m_ref, MLBlock l_ref, KVBuffer k_vmem_buffer,
                                           KVBuffer v_vmem_buffer, DmaSemaphore sem, float mask_value,
                                           MegacoreMode megacore_mode, const ProgramIds* program_ids = nullptr) {
    auto [core_index, b, h, i] = program_ids != nullptr
                                     ? *program_ids
                                     : ProgramIds{traced_program_id(0), traced_program_id(1), traced_program_id(2),
                                                  traced_program_id(3)};
    constexpr I num_kv_heads = kKvHeads, page_size = kPageSize, batch_size = kBatch;
    constexpr I bk = page_size * kPagesPerComputeBlock;
    const auto num_cores = static_cast<i32>(num_programs(0));

    const i32 b_step = megacore_mode == MegacoreMode::batch ? num_cores : 1;
    const S32 b_start = megacore_mode == MegacoreMode::batch ? core_index : S32(0);
    const i32 h_step = megacore_mode == MegacoreMode::kv_head ? num_cores : 1;
    const S32 h_start = megacore_mode == MegacoreMode::kv_head ? core_index : S32(0);

    h = h * h_step + h_start;
    b = b * b_step + b_start;
    const S32 length = lengths_ref[b];

    using Indices = std::tuple<S32, S32, S32>;
    const auto compute_block_indices = [&](const S32& b, const S32& h, const S32& i) {
      const auto advance_b = [&] {
        const S32 next_b = b + b_step;
        const auto advance_to_next_non_zero_length = [&] {
          const S32 next_next_b = next_b + b_step;
          return fori_loop(
              next_next_b / b_step, static_cast<i32>(batch_size) / b_step,
              [&](S32, S32 b) { return select(lengths_ref[b] == 0, b + b_step, b); }, next_next_b);
        };
        // The Python reads lengths_ref[next_b] here; see the header comment.
        const S32 in_range = min(next_b, static_cast<i32>(batch_size - 1));
        return Indices{cond((next_b < static_cast<i32>(batch_size)) & (lengths_ref[in_range] == 0),
                            advance_to_next_non_zero_length, [&] { return next_b; }),
                       h_start, S32(0)};
      };
      const auto advance_h = [&] {
        const S32 next_h = h + h_step;
        return cond(next_h < static_cast<i32>(num_kv_heads), [&] { return Indices{b, next_h, S32(0)}; }, advance_b);
      };
      return cond(i * static_cast<i32>(bk) < lengths_ref[b], [&] { return Indices{b, h, i}; }, advance_h);
    };

    const auto create_kv_async_copy_descriptors = [&](const S32& b, const S32& h, const S32& i,
                                                      const S32& buffer_index) {
      const S32 page_offset =
          b * static_cast<i32>(kPagesPerSequence) + i * static_cast<i32>(kPagesPerComputeBlock);
      constexpr I pages_to_load = kPagesPerComputeBlock;
      return std::pair{MultiPageAsyncCopyDescriptor(k_pages_hbm_ref, k_vmem_buffer.at(buffer_index), sem,
                                                    page_indices_ref, page_offset, pages_to_load, h),
                       MultiPageAsyncCopyDescriptor(v_pages_hbm_ref, v_vmem_buffer.at(buffer_index), sem,
                                                    page_indices_ref, page_offset, pages_to_load, h)};
    };

    when(i * static_cast<i32>(bk) < length, [&] {  // flash_attention
      const S32 step = step_ref[0];
      const S32 buffer_index = buffer_index_ref[0];

      when(i == 0, [&] {  // init
        m_ref.store(full<float, kGroup, kHeadDim>(-std::numeric_limits<float>::infinity()));
        l_ref.store(zeros<float, kGroup, kHeadDim>());
        o_ref.store(zeros<T, kGroup, kHeadDim>());
      });

      when(step == 0, [&] {  // prefetch_first_block
        const auto [async_copy_k, async_copy_v] = create_kv_async_copy_descriptors(b, h, i, buffer_index);
        async_copy_k.start();
        async_copy_v.start();
      });

      const auto [next_b, next_h, next_i] = compute_block_indices(b, h, i + 1);

      when(next_b < static_cast<i32>(batch_size), [&] {  // prefetch_next_block
        const S32 next_buffer_index = select(buffer_index == 0, S32(1), S32(0));
        const auto [async_copy_next_k, async_copy_next_v] =
            create_kv_async_copy_descriptors(next_b, next_h, next_i, next_buffer_index);
        async_copy_next_k.start();
        async_copy_next_v.start();
        buffer_index_ref[0] = next_buffer_index;
      });

      const auto [async_copy_k, async_copy_v] = create_kv_async_copy_descriptors(b, h, i, buffer_index);
      const auto q = cast<float>(q_ref.load());
      const auto k = async_copy_k.wait_and_get_loaded();
      auto qk = dot<float>(q, k, trans_b);  // einsum('hd,td->ht')
      const auto mask = i * static_cast<i32>(bk) + iota<i32, kGroup, bk>(1) < length;
      qk = qk + select(mask, 0.0f, mask_value);
      auto m_curr = reduce_max<1>(qk, keepdims);

      const auto s_curr = exp(qk - m_curr);
      const auto m_prev = m_ref.load(), l_prev = l_ref.load();
      const auto l_curr = broadcast_to<kGroup, kHeadDim>(reduce_sum<1>(s_curr, keepdims));
      const auto m_curr_b = broadcast_to<kGroup, kHeadDim>(m_curr);
      const auto m_next = max(m_prev, m_curr_b);
      const auto alpha = exp(m_prev - m_next);
      const auto beta = exp(m_curr_b - m_next);
      const auto l_next = alpha * l_prev + beta * l_curr;
      const auto l_next_safe = select(l_next == 0.0f, 1.0f, l_next);

      const auto v = async_copy_v.wait_and_get_loaded();
      const auto o_curr_times_l_curr = dot<float>(s_curr, v);

      m_ref.store(m_next);
      l_ref.store(l_next_safe);
      o_ref.store(cast<T>((l_prev * alpha * cast<float>(o_ref.load()) + beta * o_curr_times_l_curr) / l_next_safe));

      step_ref[0] = step + 1;
    });
  }

  /// paged_flash_attention_kernel_inline_seq_dim: the sequence's blocks as a
  /// loop inside one grid step.
  ///
  /// As published, the loop's bound reads lengths_ref[b] with b the grid
  /// index, not the sequence it stands for: with megacore_mode "batch", core
  /// c's grid index b is sequence 2 b + c, so it loops over another
  /// sequence's block count. A longer sequence then leaves its last blocks
  /// unprocessed and a prefetched copy never waited, which refx reports when
  /// the kernel ends (examples/jax_paged_attention.cpp shows it).
  /// `fixed_loop_bound` reads the sequence's own length instead.
  static void paged_flash_attention_kernel_inline_seq_dim(
      Lengths lengths_ref, PageIndices page_indices_ref, Counter buffer_index_ref, Counter step_ref, QBlock q_ref,
      Pages k_pages_hbm_ref, Pages v_pages_hbm_ref, OBlock o_ref, MLBlock m_ref, MLBlock l_ref,
      KVBuffer k_vmem_buffer, KVBuffer v_vmem_buffer, DmaSemaphore sem, float mask_value, MegacoreMode megacore_mode,
      bool fixed_loop_bound) {
    const S32 core_index = traced_program_id(0), b = traced_program_id(1), h = traced_program_id(2);
    const auto body = [&](S32 i) {
      const ProgramIds program_ids{core_index, b, h, i};
      paged_flash_attention_kernel(lengths_ref, page_indices_ref, buffer_index_ref, step_ref, q_ref, k_pages_hbm_ref,
                                   v_pages_hbm_ref, o_ref, m_ref, l_ref, k_vmem_buffer, v_vmem_buffer, sem, mask_value,
                                   megacore_mode, &program_ids);
    };
    constexpr i32 bk = static_cast<i32>(kPagesPerComputeBlock * kPageSize);
    const bool batch = megacore_mode == MegacoreMode::batch;
    const S32 sequence = fixed_loop_bound && batch ? b * static_cast<i32>(num_programs(0)) + core_index : b;
    fori_loop(0, (lengths_ref[sequence] + bk - 1) / bk, body);
  }

  /// The pallas_call: a kernel taking (lengths, page_indices, buffer_index,
  /// step, q, k_pages, v_pages) and returning (out, m, l). kInlineSeqDim
  /// (the Python's inline_seq_dim) picks the kernel and the grid's rank.
  template <bool kInlineSeqDim = true>
  static auto paged_attention(float mask_value = kDefaultMaskValue, MegacoreMode megacore_mode = MegacoreMode::none,
                              bool fixed_loop_bound = false) {
    const I num_cores = megacore_mode == MegacoreMode::none ? 1 : 2;
    // q_block_spec: (None, num_heads // num_kv_heads, head_dim), by megacore mode.
    const auto q_index_map = [megacore_mode, num_cores](I core_index, I b, I h, auto&&...) {
      if (megacore_mode == MegacoreMode::kv_head) return std::array<I, 3>{b, h * num_cores + core_index, 0};
      if (megacore_mode == MegacoreMode::batch) return std::array<I, 3>{b * num_cores + core_index, h, 0};
      return std::array<I, 3>{b, h, 0};
    };
    const auto q_block_spec = block<squeezed, kGroup, kHeadDim>(q_index_map);
    const I grid_b = megacore_mode == MegacoreMode::batch ? kBatch / num_cores : kBatch;
    const I grid_h = megacore_mode == MegacoreMode::kv_head ? kKvHeads / num_cores : kKvHeads;
    const auto call = [&](auto g, auto kernel) {
      return pipeline_kernel<Lengths, PageIndices, Counter, Counter, Q, Pages, Pages, O, ML, ML>(
          g, kernel, q_block_spec, any(), any(), q_block_spec, q_block_spec, q_block_spec, scratch<KVBuffer>(),
          scratch<KVBuffer>(), scratch<DmaSemaphore>());
    };
    if constexpr (kInlineSeqDim)
      return call(grid(num_cores, grid_b, grid_h).dimension_semantics(parallel, arbitrary, arbitrary),
                  [=](auto&&... refs) {
                    paged_flash_attention_kernel_inline_seq_dim(refs..., mask_value, megacore_mode, fixed_loop_bound);
                  });
    else
      return call(grid(num_cores, grid_b, grid_h, kPagesPerSequence / kPagesPerComputeBlock)
                      .dimension_semantics(parallel, arbitrary, arbitrary, arbitrary),
                  [=](auto&&... refs) { paged_flash_attention_kernel(refs..., mask_value, megacore_mode); });
  }
};
}  // namespace jax_paged_attention
