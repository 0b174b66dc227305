// Flash attention forward on one device, as a Pallas TPU kernel writes it
// (examples/flash_attention.hpp): bf16 q, k, v and output in Hbm, f32
// online-softmax state in Vmem scratch, keepdims reductions broadcast along
// the rows. Checked against softmax(q k^T / sqrt(d)) v computed on the host
// in double from the same bf16 inputs; prints the largest error, the copy
// counts and the time per call. Exits non-zero on an error above the
// tolerance of bf16 (p and the output are rounded to bf16).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "flash_attention.hpp"

using namespace flash;

int main() {
  const Executable exe = kernel(attention<bf16>).name("flash_attention").compile(Mesh{{"x", 1}});
  const auto gen = [](int operand) { return [operand](int, I e) { return bf16(input_value(operand, e)); }; };
  const Array q = Array::generate<bf16>(1, Shape{kSeqQ, kHead}, gen(0));
  const Array k = Array::generate<bf16>(1, Shape{kSeqK, kHead}, gen(1));
  const Array v = Array::generate<bf16>(1, Shape{kSeqK, kHead}, gen(2));
  const std::vector<bf16> o = exe(q, k, v)[0].to_host<bf16>(0);

  // The host reference, in double, over the bf16 inputs as the kernel sees them.
  const auto host = [](const Array& a) {
    std::vector<double> h;
    for (bf16 x : a.to_host<bf16>(0)) h.push_back(static_cast<double>(static_cast<float>(x)));
    return h;
  };
  const std::vector<double> hq = host(q), hk = host(k), hv = host(v);
  double worst = 0;
  std::vector<double> s(static_cast<std::size_t>(kSeqK));
  for (I i = 0; i < kSeqQ; ++i) {
    double mx = -INFINITY, sum = 0;
    for (I j = 0; j < kSeqK; ++j) {
      double d = 0;
      for (I c = 0; c < kHead; ++c)
        d += hq[static_cast<std::size_t>(i * kHead + c)] * hk[static_cast<std::size_t>(j * kHead + c)];
      s[static_cast<std::size_t>(j)] = d / std::sqrt(static_cast<double>(kHead));
      mx = std::max(mx, s[static_cast<std::size_t>(j)]);
    }
    for (double& x : s) sum += (x = std::exp(x - mx));
    for (I c = 0; c < kHead; ++c) {
      double want = 0;
      for (I j = 0; j < kSeqK; ++j)
        want += s[static_cast<std::size_t>(j)] * hv[static_cast<std::size_t>(j * kHead + c)];
      want /= sum;
      worst = std::max(
          worst, std::abs(static_cast<double>(static_cast<float>(o[static_cast<std::size_t>(i * kHead + c)])) - want));
    }
  }
  const bool ok = worst < 1e-2;

  constexpr int reps = 5;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) exe(q, k, v)[0].block_until_ready();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  const double flops = 4.0 * kSeqQ * kSeqK * kHead;  // two matmuls
  fmt::print(
      "flash_attention: q {}x{}, k/v {}x{} bf16, blocks {} (q) x {} (k/v), grid ({}, {}): max |error| {:.2e}: {}\n",
      kSeqQ, kHead, kSeqK, kHead, kBq, kBk, kSeqQ / kBq, kSeqK / kBk, worst, ok ? "ok" : "WRONG");
  fmt::print("flash_attention: {:.2f} ms per call, {:.2f} GFLOP/s\n", secs * 1e3, flops / secs / 1e9);
  return ok ? 0 : 1;
}
