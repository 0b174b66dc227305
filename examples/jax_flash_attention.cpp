// jax-ml/jax's flash attention forward pass (examples/jax_flash_attention.hpp)
// in the configurations its callers use: plain; causal with segment ids and
// the l / m residuals; causal with an attention bias and a logits soft cap;
// one kv block for the whole sequence (the single-step kernel); bf16 inputs.
// Each is checked against attention computed on the host in double (Pallas'
// mha_reference), with the race detector on for one of them; prints the
// largest errors and the time per call, and exits non-zero on an error above
// tolerance.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include <refx/runtime/runtime.hpp>

#include "jax_flash_attention.hpp"

namespace {
using namespace refx;
using I = std::int64_t;
using i32 = std::int32_t;

constexpr I kBatch = 2, kHeads = 2, kHeadDim = 128;

float input(int which, I e) { return static_cast<float>(((e * 2654435761u + which * 7919) % 2003) / 1001.0 - 1.0); }
i32 segment(I b, I pos) { return static_cast<i32>((pos + 37 * b) / 160); }  // segments of 160 positions

struct Errors {
  double o = 0, l = 0, m = 0;
};

/// mha_reference over the inputs as the kernel sees them.
template <class T, I kQ, I kKv>
Errors reference(const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v, const std::vector<float>* ab,
                 bool segments, bool causal, float sm_scale, std::optional<float> cap, const std::vector<T>& o,
                 const std::vector<float>* l, const std::vector<float>* m) {
  const auto f = [](auto x) { return static_cast<double>(static_cast<float>(x)); };
  const double mask_value = jax_flash_attention::kDefaultMaskValue;
  Errors e;
  std::vector<double> s(static_cast<std::size_t>(kKv));
  for (I b = 0; b < kBatch; ++b)
    for (I h = 0; h < kHeads; ++h)
      for (I i = 0; i < kQ; ++i) {
        const I qrow = (b * kHeads + h) * kQ + i;
        double mx = -INFINITY, sum = 0;
        for (I j = 0; j < kKv; ++j) {
          const I krow = (b * kHeads + h) * kKv + j;
          double d = 0;
          for (I x = 0; x < kHeadDim; ++x)
            d += f(q[static_cast<std::size_t>(qrow * kHeadDim + x)]) * f(k[static_cast<std::size_t>(krow * kHeadDim + x)]);
          if (ab != nullptr) d += (*ab)[static_cast<std::size_t>(qrow * kKv + j)];
          if (cap) d = std::tanh(d / *cap) * *cap;
          d *= sm_scale;
          const bool keep = (!segments || segment(b, i) == segment(b, j)) && (!causal || j <= i);
          if (!keep) d += mask_value;
          s[static_cast<std::size_t>(j)] = d;
          mx = std::max(mx, d);
        }
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (I x = 0; x < kHeadDim; ++x) {
          double want = 0;
          for (I j = 0; j < kKv; ++j)
            want += s[static_cast<std::size_t>(j)] * f(v[static_cast<std::size_t>(((b * kHeads + h) * kKv + j) * kHeadDim + x)]);
          e.o = std::max(e.o, std::abs(f(o[static_cast<std::size_t>(qrow * kHeadDim + x)]) - want / sum));
        }
        if (l != nullptr) e.l = std::max(e.l, std::abs((*l)[static_cast<std::size_t>(qrow * 128)] - sum) / sum);
        if (m != nullptr) e.m = std::max(e.m, std::abs((*m)[static_cast<std::size_t>(qrow * 128)] - mx));
      }
  return e;
}

template <class T, I kQ, I kKv, I block_q, I block_k_major, I block_k, bool kAb, bool kSegments, bool kResiduals>
bool run(const char* what, bool causal, float sm_scale = 1.0f, std::optional<float> soft_cap = std::nullopt,
         RuntimeOptions runtime_options = {}) {
  using FA = jax_flash_attention::FlashAttention<T, kBatch, kHeads, kQ, kKv, kHeadDim, 1, block_q, block_k_major,
                                                 block_k, kAb, kSegments, kResiduals>;
  typename FA::Options options;
  options.causal = causal;
  options.sm_scale = sm_scale;
  options.attn_logits_soft_cap = soft_cap;
  Runtime rt(runtime_options);
  const Executable exe = kernel(FA::flash_attention(options)).name("flash_attention").compile(Mesh{{"x", 1}}, {}, rt);
  const auto gen = [](int which) { return [which](int, I e) { return T(input(which, e)); }; };
  const Array q = Array::generate<T>(1, Shape{kBatch, kHeads, kQ, kHeadDim}, gen(0), rt);
  const Array k = Array::generate<T>(1, Shape{kBatch, kHeads, kKv, kHeadDim}, gen(1), rt);
  const Array v = Array::generate<T>(1, Shape{kBatch, kHeads, kKv, kHeadDim}, gen(2), rt);
  std::vector<Array> args{q, k, v};
  std::vector<float> ab_host;
  if constexpr (kAb) {
    const Array ab = Array::generate<float>(1, Shape{kBatch, kHeads, kQ, kKv}, [](int, I e) { return input(3, e); }, rt);
    ab_host = ab.to_host<float>(0);
    args.push_back(ab);
  }
  if constexpr (kSegments) {  // the wrapper's broadcast_in_dim of segment_ids.q and .kv
    args.push_back(Array::generate<i32>(1, Shape{kBatch, kQ, 128}, [](int, I e) { return segment(e / (kQ * 128), e / 128 % kQ); }, rt));
    args.push_back(Array::generate<i32>(1, Shape{kBatch, 8, kKv}, [](int, I e) { return segment(e / (8 * kKv), e % kKv); }, rt));
  }
  const auto out = exe(args);
  std::vector<float> l, m;
  if constexpr (kResiduals) {
    l = out[1].to_host<float>(0);
    m = out[2].to_host<float>(0);
  }
  const Errors e = reference<T, kQ, kKv>(q.to_host<T>(0), k.to_host<T>(0), v.to_host<T>(0), kAb ? &ab_host : nullptr,
                                         kSegments, options.causal, options.sm_scale, options.attn_logits_soft_cap,
                                         out[0].to_host<T>(0), kResiduals ? &l : nullptr, kResiduals ? &m : nullptr);
  const double tolerance = sizeof(T) == 4 ? 2e-4 : 2e-2;
  const bool ok = e.o < tolerance && e.l < 1e-3 && e.m < 1e-3;

  constexpr int reps = 3;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) exe(args)[0].block_until_ready();
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
  fmt::print("flash_attention {:<52} {}  o {:.1e} l {:.1e} m {:.1e}  steps {:4}  {:9.1f} us/call\n", what,
             ok ? "ok" : "WRONG", e.o, e.l, e.m, exe.pipeline_report().steps, us);
  return ok;
}
}  // namespace

int main() {
  bool ok = true;
  ok = run<float, 512, 512, 128, 256, 128, false, false, false>("f32, plain", false) && ok;
  ok = run<float, 512, 512, 128, 256, 128, false, true, true>("f32, causal, segment ids, save_residuals, detect_races",
                                                              true, 0.125f, std::nullopt,
                                                              RuntimeOptions{.detect_races = true}) &&
       ok;
  ok = run<float, 256, 512, 128, 256, 128, true, false, false>("f32, causal, ab, soft cap 30", true, 1.0f, 30.0f) && ok;
  ok = run<float, 256, 128, 128, 128, 128, false, true, true>("f32, single step (block_k == kv_seq_len), segments",
                                                              false, 0.5f) &&
       ok;
  ok = run<bf16, 512, 512, 128, 256, 128, false, false, false>("bf16, causal", true, 0.125f) && ok;
  return ok ? 0 : 1;
}
