#pragma once
// Timing shared by the benchmarks that race refx against one baseline:
// both run alternately in every iteration, the medians and their ratio
// become the counters refx_us, base_us and ratio.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace refx_bench {
using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// Times `refx_call` and `base` alternately (one warm-up call each first);
/// the iteration time is refx's.
template <class R, class B>
void alternate(benchmark::State& state, R&& refx_call, B&& base) {
  refx_call();
  base();
  std::vector<double> tr, tb;
  for (auto _ : state) {
    auto t0 = Clock::now();
    refx_call();
    const double r = seconds_since(t0);
    t0 = Clock::now();
    base();
    tb.push_back(seconds_since(t0));
    tr.push_back(r);
    state.SetIterationTime(r);
  }
  state.counters["refx_us"] = median(tr) * 1e6;
  state.counters["base_us"] = median(tb) * 1e6;
  state.counters["ratio"] = median(tr) / median(tb);
}
}  // namespace refx_bench
