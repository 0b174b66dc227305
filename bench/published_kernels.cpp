// The four kernels published in jax-ml/jax, as ported in examples/jax_*.hpp,
// each against the same math in plain C++ on one thread (Eigen's GEMM and
// vectorised exp), timed alternately in every iteration:
//
// BM_PagedAttention: decode over 8 sequences of up to 1024 positions in
//   16-row pages, 32 query heads on 4 kv heads, head_dim 128, f32; against
//   attention over the pages each sequence's table names, gathered.
// BM_Gmm: 1024 x 512 x 512 in 8 groups, bf16 in, f32 out, tiles 128; against
//   one Eigen GEMM per group in f32 (the inputs converted beforehand), and
//   (tiles_us, ratio_tiles) against the kernel's own math in Eigen: one
//   128-row tile GEMM per visit of the group metadata, a tile that two
//   groups share computed once for each, its group's rows kept (11 visits
//   of 8 tiles here, as the published kernel runs them).
// BM_FlashAttention: causal, 2 batches x 4 heads x 1024 x 128, f32, blocks
//   128; against attention row block by row block over the keys at or
//   before the block's last row.
// BM_AllGather: 4 devices x 1 MiB; against memcpy of every shard into every
//   device's output.
// Counters (medians): refx_us, base_us, ratio = refx_us / base_us (issue
// "Native speed" records these in docs/performance.md).
//
// Run: cmake --preset release && cmake --build --preset release --target bench_published_kernels &&
//      build/release/bench/bench_published_kernels

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include <Eigen/Core>

#include <refx/runtime/runtime.hpp>

#include "timing.hpp"

#include "../examples/jax_all_gather.hpp"
#include "../examples/jax_flash_attention.hpp"
#include "../examples/jax_megablox_gmm.hpp"
#include "../examples/jax_paged_attention.hpp"

namespace {
using namespace refx;
using refx_bench::alternate;
using I = std::int64_t;
using i32 = std::int32_t;
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

float input(int which, I e) { return static_cast<float>(((e * 2654435761u + which * 7919) % 2003) / 1001.0 - 1.0); }

/// Rows [r, r + n) of a host copy of `a` (device 0) as an f32 matrix of `cols` columns.
template <class T>
Matrix host_matrix(const std::vector<T>& a, I rows, I cols, I first_row = 0) {
  Matrix m(rows, cols);
  for (I e = 0; e < rows * cols; ++e)
    m.data()[e] = static_cast<float>(a[static_cast<std::size_t>(first_row * cols + e)]);
  return m;
}

void softmax_rows(Matrix& s) {
  for (I r = 0; r < s.rows(); ++r) {
    const float mx = s.row(r).maxCoeff();
    s.row(r).array() = (s.row(r).array() - mx).exp();
    s.row(r) /= s.row(r).sum();
  }
}

// ---------------------------------------------------------------- paged attention

void BM_PagedAttention(benchmark::State& state) {
  constexpr I kBatch = 8, kHeads = 32, kKvHeads = 4, kHeadDim = 128, kPageSize = 16, kPagesPerSeq = 64;
  constexpr I kTotalPages = kBatch * kPagesPerSeq, kBlock = 8;
  using PA = jax_paged_attention::PagedAttention<float, kBatch, kHeads, kKvHeads, kHeadDim, kTotalPages, kPageSize,
                                                 kPagesPerSeq, kBlock>;
  const Executable exe = kernel(PA::paged_attention<true>()).name("paged_attention").compile(Mesh{{"x", 1}});
  const std::vector<i32> lengths{1024, 777, 1000, 512, 129, 1024, 300, 900};
  std::vector<i32> table(kTotalPages);
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), std::mt19937(3));
  const Array q = Array::generate<float>(1, Shape{kBatch, kHeads, kHeadDim}, [](int, I e) { return input(0, e); });
  const Array kp = Array::generate<float>(1, Shape{kKvHeads, kTotalPages, kPageSize, kHeadDim},
                                          [](int, I e) { return input(1, e); });
  const Array vp = Array::generate<float>(1, Shape{kKvHeads, kTotalPages, kPageSize, kHeadDim},
                                          [](int, I e) { return input(2, e); });
  const Array la = Array::from_shards<i32>({lengths}, Shape{kBatch}),
              ta = Array::from_shards<i32>({table}, Shape{kTotalPages});
  const Array zero = Array::from_shards<i32>({{0}}, Shape{1});
  const std::vector<float> hq = q.to_host<float>(0), hk = kp.to_host<float>(0), hv = vp.to_host<float>(0);
  Matrix out(kBatch * kHeads, kHeadDim), kg(kPagesPerSeq * kPageSize, kHeadDim), vg(kPagesPerSeq * kPageSize, kHeadDim);
  const auto refx_call = [&] {
    auto r = exe(la, ta, zero, zero, q, kp, vp);
    r[0].block_until_ready();
    benchmark::DoNotOptimize(r[0].shard(0).data());
  };
  const auto base = [&] {
    for (I b = 0; b < kBatch; ++b) {
      const I length = lengths[static_cast<std::size_t>(b)];
      for (I g = 0; g < kKvHeads; ++g) {
        for (I t = 0; t < length; t += kPageSize) {  // gather the sequence's pages
          const I page = table[static_cast<std::size_t>(b * kPagesPerSeq + t / kPageSize)];
          const std::size_t at = static_cast<std::size_t>(((g * kTotalPages + page) * kPageSize) * kHeadDim);
          std::memcpy(kg.row(t).data(), hk.data() + at, sizeof(float) * kPageSize * kHeadDim);
          std::memcpy(vg.row(t).data(), hv.data() + at, sizeof(float) * kPageSize * kHeadDim);
        }
        const Eigen::Map<const Matrix> qg(hq.data() + (b * kHeads + g * (kHeads / kKvHeads)) * kHeadDim,
                                          kHeads / kKvHeads, kHeadDim);
        Matrix s = qg * kg.topRows(length).transpose();
        softmax_rows(s);
        out.middleRows(b * kHeads + g * (kHeads / kKvHeads), kHeads / kKvHeads).noalias() = s * vg.topRows(length);
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  alternate(state, refx_call, base);
  const Matrix got = host_matrix(exe(la, ta, zero, zero, q, kp, vp)[0].to_host<float>(0), kBatch * kHeads, kHeadDim);
  const float worst = (got - out).cwiseAbs().maxCoeff();
  if (worst > 1e-4f) state.SkipWithError("refx and the baseline disagree");
  state.SetLabel(
      fmt::format("f32, 8 seqs <= 1024, 32 q / 4 kv heads, pages 16, block 8 pages (max |diff| {:.1e})", worst));
}
BENCHMARK(BM_PagedAttention)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

// ---------------------------------------------------------------- gmm

void BM_Gmm(benchmark::State& state) {
  constexpr I kM = 1024, kK = 512, kN = 512, kGroups = 8;
  using G = jax_megablox_gmm::Gmm<bf16, kM, kK, kN, kGroups, 128, 128, 128>;
  const Executable exe = kernel(G::gmm()).name("gmm").compile(Mesh{{"x", 1}});
  const std::vector<i32> sizes{100, 156, 200, 56, 128, 0, 300, 84};
  const auto meta = jax_megablox_gmm::make_group_metadata(sizes, kM, 128, 0, kGroups, false);
  const auto smem = [](const std::vector<i32>& v) {
    return Array::from_shards<i32>({v}, Shape{static_cast<I>(v.size())});
  };
  const Array lhs = Array::generate<bf16>(1, Shape{kM, kK}, [](int, I e) { return bf16(input(0, e)); });
  const Array rhs = Array::generate<bf16>(1, Shape{kGroups, kK, kN}, [](int, I e) { return bf16(input(1, e)); });
  const std::vector<Array> args{smem(meta.group_offsets),
                                smem(meta.group_ids),
                                smem(meta.m_tile_ids),
                                smem({0}),
                                smem({meta.num_tiles}),
                                lhs,
                                rhs};
  const Matrix hl = host_matrix(lhs.to_host<bf16>(0), kM, kK);
  const std::vector<bf16> hr_all = rhs.to_host<bf16>(0);
  std::vector<Matrix> hr;
  for (I g = 0; g < kGroups; ++g) hr.push_back(host_matrix(hr_all, kK, kN, g * kK));
  Matrix out(kM, kN);
  const auto refx_call = [&] {
    auto r = exe(args);
    r[0].block_until_ready();
    benchmark::DoNotOptimize(r[0].shard(0).data());
  };
  const auto base = [&] {
    for (I g = 0, start = 0; g < kGroups; start += sizes[static_cast<std::size_t>(g)], ++g)
      if (sizes[static_cast<std::size_t>(g)] > 0)
        out.middleRows(start, sizes[static_cast<std::size_t>(g)]).noalias() =
            hl.middleRows(start, sizes[static_cast<std::size_t>(g)]) * hr[static_cast<std::size_t>(g)];
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  const std::vector<i32> offsets = meta.group_offsets;
  Matrix tile(128, kN);
  const auto tiles = [&] {
    for (i32 t = 0; t < meta.num_tiles; ++t) {
      const auto g = static_cast<std::size_t>(meta.group_ids[static_cast<std::size_t>(t)]);
      const I row = I{meta.m_tile_ids[static_cast<std::size_t>(t)]} * 128;
      tile.noalias() = hl.middleRows(row, 128) * hr[g];
      const I from = std::max<I>(row, offsets[g]), to = std::min<I>(row + 128, offsets[g + 1]);
      if (to > from) out.middleRows(from, to - from) = tile.middleRows(from - row, to - from);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  alternate(state, refx_call, base, "tiles", tiles);
  const Matrix got = host_matrix(exe(args)[0].to_host<float>(0), kM, kN);
  const float worst = (got - out).cwiseAbs().maxCoeff();
  if (worst > 1e-2f) state.SkipWithError("refx and the baseline disagree");
  state.SetLabel(fmt::format("1024x512x512, 8 groups, bf16 in, f32 out, {} active tiles (max |diff| {:.1e})",
                             meta.num_tiles, worst));
}
BENCHMARK(BM_Gmm)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

// ---------------------------------------------------------------- flash attention

void BM_FlashAttention(benchmark::State& state) {
  constexpr I kB = 2, kH = 4, kS = 1024, kD = 128, kBlock = 128;
  using FA = jax_flash_attention::FlashAttention<float, kB, kH, kS, kS, kD, 1, kBlock, kBlock, kBlock>;
  FA::Options o;
  o.causal = true;
  o.sm_scale = 1.0f / std::sqrt(static_cast<float>(kD));
  const Executable exe = kernel(FA::flash_attention(o)).name("flash_attention").compile(Mesh{{"x", 1}});
  const auto gen = [](int w) { return [w](int, I e) { return input(w, e); }; };
  const Array q = Array::generate<float>(1, Shape{kB, kH, kS, kD}, gen(0));
  const Array k = Array::generate<float>(1, Shape{kB, kH, kS, kD}, gen(1));
  const Array v = Array::generate<float>(1, Shape{kB, kH, kS, kD}, gen(2));
  const std::vector<float> hq = q.to_host<float>(0), hk = k.to_host<float>(0), hv = v.to_host<float>(0);
  Matrix out(kB * kH * kS, kD);
  const auto refx_call = [&] {
    auto r = exe(q, k, v);
    r[0].block_until_ready();
    benchmark::DoNotOptimize(r[0].shard(0).data());
  };
  const auto base = [&] {
    for (I bh = 0; bh < kB * kH; ++bh) {
      const Eigen::Map<const Matrix> Q(hq.data() + bh * kS * kD, kS, kD), K(hk.data() + bh * kS * kD, kS, kD),
          V(hv.data() + bh * kS * kD, kS, kD);
      for (I i = 0; i < kS; i += kBlock) {
        const I keys = i + kBlock;  // the keys at or before the block's last row
        Matrix s = (Q.middleRows(i, kBlock) * K.topRows(keys).transpose()) * o.sm_scale;
        for (I r = 0; r < kBlock; ++r) {  // softmax over the row's keys; the later ones weigh exactly 0
          // (Eigen's exp of a large negative number is a denormal, not 0, and a
          // GEMM over denormals ran 7x slower without -march=native)
          const I valid = i + r + 1;
          auto row = s.row(r).head(valid).array();
          row = (row - row.maxCoeff()).exp();
          row /= row.sum();
          s.row(r).tail(keys - valid).setZero();
        }
        out.middleRows(bh * kS + i, kBlock).noalias() = s * V.topRows(keys);
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  alternate(state, refx_call, base);
  const Matrix got = host_matrix(exe(q, k, v)[0].to_host<float>(0), kB * kH * kS, kD);
  const float worst = (got - out).cwiseAbs().maxCoeff();
  if (worst > 1e-4f) state.SkipWithError("refx and the baseline disagree");
  state.SetLabel(fmt::format("causal, 2 x 4 heads x 1024 x 128, f32, blocks 128 (max |diff| {:.1e})", worst));
}
BENCHMARK(BM_FlashAttention)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

// ---------------------------------------------------------------- all_gather

void BM_AllGather(benchmark::State& state) {
  constexpr I kN = 4, kShard = 2048, kCols = 128;  // 1 MiB of f32 per device
  const Executable exe = jax_all_gather::all_gather<float, kN, kShard, kCols>(Mesh{{"x", static_cast<int>(kN)}});
  const Array x = Array::generate<float>(static_cast<int>(kN), Shape{kShard, kCols},
                                         [](int d, I e) { return static_cast<float>(d * 1000 + e % 997); });
  std::vector<std::vector<float>> shards, outs(kN, std::vector<float>(static_cast<std::size_t>(kN * kShard * kCols)));
  for (int d = 0; d < kN; ++d) shards.push_back(x.to_host<float>(d));
  const auto refx_call = [&] {
    auto r = exe(x);
    r[0].block_until_ready();
    benchmark::DoNotOptimize(r[0].shard(0).data());
  };
  const auto base = [&] {
    for (I d = 0; d < kN; ++d)
      for (I e = 0; e < kN; ++e)
        std::memcpy(outs[static_cast<std::size_t>(d)].data() + e * kShard * kCols,
                    shards[static_cast<std::size_t>(e)].data(), sizeof(float) * kShard * kCols);
    benchmark::DoNotOptimize(outs.data());
    benchmark::ClobberMemory();
  };
  alternate(state, refx_call, base);
  const Array o = exe(x)[0];
  for (int d = 0; d < kN; ++d)
    if (o.to_host<float>(d) != outs[static_cast<std::size_t>(d)]) state.SkipWithError("refx and the baseline disagree");
  state.SetLabel("4 devices x 1 MiB f32, against memcpy of every shard into every output");
}
BENCHMARK(BM_AllGather)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
