#pragma once
// Timing shared by the benchmarks that race refx against a baseline (or
// two): they run alternately in every iteration, the medians and their
// ratio become the counters refx_us, base_us and ratio.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace refx_bench {
using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// Times `refx_call`, `base` and, when `name` is set, `also` alternately
/// (one warm-up call each first); the iteration time is refx's. `also` is a
/// second baseline: counters <name>_us and ratio_<name> = refx / it.
template <class R, class B, class A>
void alternate(benchmark::State& state, R&& refx_call, B&& base, const char* name, A&& also) {
  refx_call();
  base();
  if (name != nullptr) also();
  std::vector<double> tr, tb, ta;
  for (auto _ : state) {
    auto t0 = Clock::now();
    refx_call();
    const double r = seconds_since(t0);
    t0 = Clock::now();
    base();
    tb.push_back(seconds_since(t0));
    if (name != nullptr) {
      t0 = Clock::now();
      also();
      ta.push_back(seconds_since(t0));
    }
    tr.push_back(r);
    state.SetIterationTime(r);
  }
  state.counters["refx_us"] = median(tr) * 1e6;
  state.counters["base_us"] = median(tb) * 1e6;
  state.counters["ratio"] = median(tr) / median(tb);
  if (name != nullptr) {
    state.counters[std::string(name) + "_us"] = median(ta) * 1e6;
    state.counters[std::string("ratio_") + name] = median(tr) / median(ta);
  }
}

/// Times `refx_call` and `base` alternately (see above).
template <class R, class B>
void alternate(benchmark::State& state, R&& refx_call, B&& base) {
  alternate(state, refx_call, base, nullptr, [] {});
}
}  // namespace refx_bench
