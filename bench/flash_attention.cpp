// Flash attention forward (examples/flash_attention.hpp: q 1024 x 128, k / v
// 4096 x 128, blocks 128 on q and 256 on k / v, one device) against the
// same blocked online-softmax algorithm written with Eigen in f32 on one
// thread (Eigen's GEMM for both products, its vectorised exp for the
// softmax), timed alternately in every iteration.
//
// BM_FlashAttention/<bf16>: refx's kernel in f32 (0) or in bf16 with f32
//   scratch (1), against the Eigen f32 implementation.
// Counters (medians): refx_us, base_us, ratio = refx_us / base_us.
//
// Run: cmake --preset release && cmake --build --preset release --target bench_flash_attention &&
//      build/release/bench/bench_flash_attention

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "../examples/flash_attention.hpp"
#include "timing.hpp"

namespace {
using namespace flash;
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The same algorithm as the kernel, block by block, in f32 with Eigen.
void eigen_attention(const Matrix& q, const Matrix& k, const Matrix& v, Matrix& o) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHead));
  Matrix s(kBq, kBk), acc(kBq, kHead);
  Eigen::ArrayXf m(kBq), l(kBq), m_new(kBq), alpha(kBq);
  for (I i = 0; i < kSeqQ; i += kBq) {
    m.setConstant(-std::numeric_limits<float>::infinity());
    l.setZero();
    acc.setZero();
    const auto qb = q.middleRows(i, kBq);
    for (I j = 0; j < kSeqK; j += kBk) {
      s.noalias() = (qb * k.middleRows(j, kBk).transpose()) * scale;
      m_new = m.max(s.rowwise().maxCoeff().array());
      // Row by row: Eigen does not vectorise a colwise broadcast over
      // row-major storage (it would call the C library's expf per element).
      for (I r = 0; r < kBq; ++r) s.row(r).array() = (s.row(r).array() - m_new(r)).exp();
      alpha = (m - m_new).exp();
      l = alpha * l + s.rowwise().sum().array();
      acc.array().colwise() *= alpha;
      acc.noalias() += s * v.middleRows(j, kBk);
      m = m_new;
    }
    o.middleRows(i, kBq).array() = acc.array().colwise() / l;
  }
}

template <class T>
void run(benchmark::State& state) {
  const Executable exe = kernel(attention<T>).name("flash_attention").compile(Mesh{{"x", 1}});
  const auto gen = [](int operand) { return [operand](int, I e) { return static_cast<T>(input_value(operand, e)); }; };
  const Array q = Array::generate<T>(1, Shape{kSeqQ, kHead}, gen(0)),
              k = Array::generate<T>(1, Shape{kSeqK, kHead}, gen(1)),
              v = Array::generate<T>(1, Shape{kSeqK, kHead}, gen(2));
  const auto host = [](const Array& a, I rows) {
    Matrix h(rows, kHead);
    const std::vector<T> x = a.to_host<T>(0);
    for (I e = 0; e < rows * kHead; ++e) h.data()[e] = static_cast<float>(x[static_cast<std::size_t>(e)]);
    return h;
  };
  const Matrix hq = host(q, kSeqQ), hk = host(k, kSeqK), hv = host(v, kSeqK);
  Matrix ho(kSeqQ, kHead);
  const auto refx_call = [&] {
    std::vector<Array> r = exe(q, k, v);
    r[0].block_until_ready();
    benchmark::DoNotOptimize(r[0].shard(0).data());
  };
  const auto base = [&] {
    eigen_attention(hq, hk, hv, ho);
    benchmark::DoNotOptimize(ho.data());
    benchmark::ClobberMemory();
  };
  refx_bench::alternate(state, refx_call, base);
  // The two must agree to the precision of T.
  const std::vector<T> got = exe(q, k, v)[0].to_host<T>(0);
  float worst = 0;
  for (I e = 0; e < kSeqQ * kHead; ++e)
    worst = std::max(worst, std::abs(static_cast<float>(got[static_cast<std::size_t>(e)]) - ho.data()[e]));
  if (worst > (std::is_same_v<T, float> ? 1e-4f : 2e-2f)) state.SkipWithError("refx and the baseline disagree");
  state.SetLabel(fmt::format("{} q {}x{}, k/v {}x{}, blocks {}x{} (max |diff| {:.1e})",
                             std::is_same_v<T, float> ? "f32" : "bf16", kSeqQ, kHead, kSeqK, kHead, kBq, kBk, worst));
}

void BM_FlashAttention(benchmark::State& state) {
  if (state.range(0) == 0) run<float>(state);
  else run<bf16>(state);
}
BENCHMARK(BM_FlashAttention)
    ->ArgName("bf16")
    ->DenseRange(0, 1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
