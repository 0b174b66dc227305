#pragma once
// Ragged paged attention (decode), written the way the Pallas TPU kernels
// write it: a batch of sequences of different lengths whose keys and values
// live in fixed-size pages of one shared pool, found through a page table.
// The page table and the sequence lengths are the kernel's scalar operands
// (Pallas' PrefetchScalarGridSpec): the grid is (sequence b, page slot p);
// the k / v index maps read page_table[b, p] to pick the page to fetch.
//
// Pages past a sequence's end are skipped: their index map returns the
// sequence's last page again, so the block index does not change and the
// pipeline does not fetch it (the run-time fetch rule), and the body skips
// the step with a traced `when`. Each sequence's kQ query rows (e.g. the
// query heads sharing one kv head) use an online softmax whose running row
// maximum m, row sum l and accumulator acc live in f32 scratch across its
// pages; positions past the sequence's end inside its last page are masked.
// Used by examples/ragged_paged_attention.cpp (checked against a host
// reference).

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>

#include <refx/refx.hpp>

namespace paged {
using namespace refx;
using I = std::int64_t;
using i32 = std::int32_t;

inline constexpr I kBatch = 4;        // sequences
inline constexpr I kPageSize = 16;    // key / value rows per page
inline constexpr I kPagesPerSeq = 8;  // page slots per sequence: lengths up to 128
inline constexpr I kPoolPages = 40;   // pages in the shared pool
inline constexpr I kHead = 64;        // head dimension
inline constexpr I kQ = 8;            // query rows per sequence

using PageTable = SmemRef<const i32, kBatch, kPagesPerSeq>;
using Lengths = SmemRef<const i32, kBatch>;
using Pool = HbmRef<const float, kPoolPages * kPageSize, kHead>;

/// The page that step (b, p) reads: the table's entry, or the sequence's
/// last page again for a slot past its end (not fetched again).
inline constexpr auto kv_page = [](I b, I p, PageTable table, Lengths lengths) {
  const auto last_slot = (lengths.at(b).load() - 1) / static_cast<i32>(kPageSize);
  return std::make_tuple(table.at(b, min(last_slot, static_cast<i32>(p))).load(), I{0});
};

inline const auto attention = pipeline_kernel<PageTable, Lengths, HbmRef<const float, kBatch * kQ, kHead>, Pool, Pool,
                                              HbmRef<float, kBatch * kQ, kHead>>(
    grid(kBatch, kPagesPerSeq),
    [](PageTable, Lengths lengths, VmemRef<const float, kQ, kHead> qb, VmemRef<const float, kPageSize, kHead> kb,
       VmemRef<const float, kPageSize, kHead> vb, VmemRef<float, kQ, kHead> ob, VmemRef<float, kQ, 1> m,
       VmemRef<float, kQ, 1> l, VmemRef<float, kQ, kHead> acc) {
      const I b = program_id(0), p = program_id(1);
      if (p == 0) {
        m.store(-std::numeric_limits<float>::infinity());
        l.store(0.0f);
        acc.store(0.0f);
      }
      const auto length = lengths.at(b).load();
      when(length > static_cast<i32>(p * kPageSize), [&] {  // a page past the end: nothing to do
        const float scale = 1.0f / std::sqrt(static_cast<float>(kHead));
        const auto position = iota<i32, kQ, kPageSize>(1) + static_cast<i32>(p * kPageSize);
        const auto s = select(position < length, dot<float>(qb.load(), kb.load(), trans_b) * scale,
                              -std::numeric_limits<float>::infinity());  // <kQ, kPageSize>
        const auto m_prev = m.load();
        const auto m_new = max(m_prev, reduce_max<1>(s, keepdims));
        const auto e = exp(s - m_new);
        const auto alpha = exp(m_prev - m_new);
        l.store(alpha * l.load() + reduce_sum<1>(e, keepdims));
        acc.store(alpha * acc.load() + dot<float>(e, vb.load()));
        m.store(m_new);
      });
      if (p == kPagesPerSeq - 1) ob.store(acc.load() / l.load());
    },
    block<kQ, kHead>([](I b, I, PageTable, Lengths) {
      return std::array{b, I{0}};
    }),
    block<kPageSize, kHead>(kv_page), block<kPageSize, kHead>(kv_page),
    block<kQ, kHead>([](I b, I, PageTable, Lengths) {
      return std::array{b, I{0}};
    }),
    scratch<VmemRef<float, kQ, 1>>(), scratch<VmemRef<float, kQ, 1>>(), scratch<VmemRef<float, kQ, kHead>>());

/// Smooth inputs in [-1, 1], different per operand.
inline float input_value(int operand, I e) {
  return std::sin(0.23f * static_cast<float>(e % 1013) + 0.9f * static_cast<float>(operand)) *
         std::cos(0.017f * static_cast<float>(e / kHead + 3 * operand));
}

}  // namespace paged
