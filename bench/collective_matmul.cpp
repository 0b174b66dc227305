// Collective matmul at the sizes users run (issue 23, item 5): N = 4 devices,
// a 256 x 1024 block of A each, B of 1024 x 1024 (compute-bound) or
// 1024 x 32 (a block's copy takes about as long as its product), f32 and
// bf16 inputs (bf16 accumulates in f32). out = all_gather(A) @ B on every device.
//
// Rows, per element type T and width n of B, in one run:
//   BM_CollectiveMatmul<T>/n   collectives::collective_matmul (ring, overlapped)
//   BM_LocalMatmuls<T>/n       the same N products per device, no communication
//   BM_AllGather<T>/n          the all-gather of A alone (collectives::all_gather)
//   BM_ThreadPeer<float>/n     the program a user would write by hand: one
//                              thread per device copies the N blocks of A
//                              together, then runs Eigen's single-threaded GEMM
// Each iteration is one call and a wait for its output. After the rows, a
// summary prints, per (T, n), overlap = t(collective) / max(t(local), t(gather)):
// 1.0 means communication is hidden completely; the target is <= 1.15.
// For f32 it also prints vs_threads = t(collective) / t(thread peer): the
// target is <= 1.05 (issue 49).
// The MPI peer (MPI_Allgather, then Eigen's GEMM, 4 ranks) is
// bench/mpi_allgather_matmul.cpp; bench/run_collective_matmul.sh runs both.
//
//   build/release/bench/bench_collective_matmul --benchmark_min_time=1

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/ir/gemm.hpp>
#include <refx/refx.hpp>
// After refx: <refx/ir/gemm.hpp> includes Eigen first, with GCC 12's false
// warnings silenced (bench/matmul.cpp says more).
#include <Eigen/Core>

namespace {
using namespace refx;
using Clock = std::chrono::steady_clock;

constexpr int kN = 4;
constexpr std::int64_t kM = 256, kK = 1024;

template <class T>
Array lhs() {
  return Array::generate<T>(kN, Shape{kM, kK}, [](int d, std::int64_t i) { return T((d * 7 + i) % 5 - 2); });
}
template <class T, std::int64_t Cols>
Array rhs() {
  return Array::generate<T>(kN, Shape{kK, Cols}, [](int d, std::int64_t i) { return T((d + 3 * i) % 7 - 3); });
}

template <class T, std::int64_t Cols>
Executable collective() {
  return kernel([](VmemRef<const T, kM, kK> a, VmemRef<const T, kK, Cols> b, VmemRef<float, kN * kM, Cols> out) {
           collectives::collective_matmul(a, b, out, "x");
         })
      .compile(Mesh{{"x", kN}});
}

/// The collective's compute alone: N products of a (m, k) block with b, each
/// block read (and, in bf16, widened) once per product as the collective's
/// N distinct blocks are, b widened once as the collective does.
template <class T, std::int64_t Cols>
Executable local() {
  return kernel([](VmemRef<const T, kM, kK> a, VmemRef<const T, kK, Cols> b, VmemRef<float, kN * kM, Cols> out) {
           const auto widen = [](const auto& v) {
             if constexpr (is_half_float_v<T>) return cast<float>(v);
             else return v;
           };
           const auto rhs = widen(b.load());
           for (int s = 0; s < kN; ++s) out.at(ds(s * kM, kM)).store(dot<float>(widen(a.load()), rhs));
         })
      .compile(Mesh{{"x", kN}});
}

/// The collective's communication alone: the all-gather of A.
template <class T>
Executable gather() {
  return kernel([](VmemRef<const T, kM, kK> a, VmemRef<T, kN, kM, kK> all) { collectives::all_gather(a, all, "x"); })
      .compile(Mesh{{"x", kN}});
}

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The hand-written peer: kN threads, kept alive across calls; in a call each
/// copies the kN blocks of A (the same values as lhs<float>()) into one
/// (kN * kM, kK) matrix, then multiplies it by its B with Eigen.
template <std::int64_t Cols>
class ThreadPeer {
 public:
  ThreadPeer() {
    for (int d = 0; d < kN; ++d) {
      a_.emplace_back(kM, kK);
      b_.emplace_back(kK, Cols);
      full_.emplace_back(kN * kM, kK);
      out_.emplace_back(kN * kM, Cols);
      for (std::int64_t i = 0; i < kM * kK; ++i) a_[d].data()[i] = static_cast<float>((d * 7 + i) % 5 - 2);
      for (std::int64_t i = 0; i < kK * Cols; ++i) b_[d].data()[i] = static_cast<float>((d + 3 * i) % 7 - 3);
    }
    for (int d = 0; d < kN; ++d) team_.emplace_back([this, d] { serve(d); });
  }
  ~ThreadPeer() {
    stop_ = true;
    start_.arrive_and_wait();
  }
  ThreadPeer(const ThreadPeer&) = delete;
  ThreadPeer& operator=(const ThreadPeer&) = delete;

  void call() {
    start_.arrive_and_wait();
    done_.arrive_and_wait();
  }

 private:
  void serve(int d) {
    for (;;) {
      start_.arrive_and_wait();
      if (stop_) return;
      for (int s = 0; s < kN; ++s) std::memcpy(full_[d].data() + s * kM * kK, a_[s].data(), sizeof(float) * kM * kK);
      out_[d].noalias() = full_[d] * b_[d];
      done_.arrive_and_wait();
    }
  }

  std::vector<RowMatrix> a_, b_, full_, out_;
  std::barrier<> start_{kN + 1}, done_{kN + 1};
  std::atomic<bool> stop_{false};
  std::vector<std::jthread> team_;
};

std::map<std::tuple<std::string, std::int64_t, std::string>, double>& times() {
  static std::map<std::tuple<std::string, std::int64_t, std::string>, double> t;
  return t;
}

/// Times calls of `exe` (median per call, in the row's manual time).
template <class... Args>
void run(benchmark::State& state, const std::string& type, std::int64_t cols, const std::string& what,
         const Executable& exe, const Args&... args) {
  exe(args...)[0].block_until_ready();  // warm up: first-touch of outputs and scratch
  std::vector<double> samples;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    exe(args...)[0].block_until_ready();
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    samples.push_back(t);
    state.SetIterationTime(t);
  }
  std::sort(samples.begin(), samples.end());
  const double med = samples[samples.size() / 2];
  state.counters["median_ms"] = med * 1e3;
  times()[{type, cols, what}] = med;
}

template <class T, std::int64_t Cols>
void BM_CollectiveMatmul(benchmark::State& state) {
  static const Array a = lhs<T>(), b = rhs<T, Cols>();
  static const Executable exe = collective<T, Cols>();
  run(state, std::string(name_of(dtype_v<T>)), Cols, "collective", exe, a, b);
}
template <class T, std::int64_t Cols>
void BM_LocalMatmuls(benchmark::State& state) {
  static const Array a = lhs<T>(), b = rhs<T, Cols>();
  static const Executable exe = local<T, Cols>();
  run(state, std::string(name_of(dtype_v<T>)), Cols, "local", exe, a, b);
}
template <class T, std::int64_t Cols>
void BM_AllGather(benchmark::State& state) {
  static const Array a = lhs<T>();
  static const Executable exe = gather<T>();
  run(state, std::string(name_of(dtype_v<T>)), Cols, "gather", exe, a);
}

template <std::int64_t Cols>
void BM_ThreadPeer(benchmark::State& state) {
  ThreadPeer<Cols> peer;
  peer.call();  // warm up
  std::vector<double> samples;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    peer.call();
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    samples.push_back(t);
    state.SetIterationTime(t);
  }
  std::sort(samples.begin(), samples.end());
  state.counters["median_ms"] = samples[samples.size() / 2] * 1e3;
  times()[{"f32", Cols, "threads"}] = samples[samples.size() / 2];
}

#define REFX_CM_ROWS(T, Cols)                                                              \
  BENCHMARK(BM_CollectiveMatmul<T, Cols>)->UseManualTime()->Unit(benchmark::kMillisecond); \
  BENCHMARK(BM_LocalMatmuls<T, Cols>)->UseManualTime()->Unit(benchmark::kMillisecond);     \
  BENCHMARK(BM_AllGather<T, Cols>)->UseManualTime()->Unit(benchmark::kMillisecond);

REFX_CM_ROWS(float, 1024)
BENCHMARK(BM_ThreadPeer<1024>)->UseManualTime()->Unit(benchmark::kMillisecond);
REFX_CM_ROWS(float, 32)
BENCHMARK(BM_ThreadPeer<32>)->UseManualTime()->Unit(benchmark::kMillisecond);
REFX_CM_ROWS(bf16, 1024)
REFX_CM_ROWS(bf16, 32)

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf(
      "\ncollective matmul, N = %d, a %ldx%ld per device (medians; overlap = collective / max(local, gather)):\n", kN,
      static_cast<long>(kM), static_cast<long>(kK));
  std::printf("%-6s %6s %14s %12s %12s %8s %11s\n", "type", "n", "collective_ms", "local_ms", "gather_ms", "overlap",
              "vs_threads");
  for (const auto& [key, t] : times()) {
    const auto& [type, cols, what] = key;
    if (what != "collective") continue;
    const auto l = times().find({type, cols, "local"}), g = times().find({type, cols, "gather"});
    if (l == times().end() || g == times().end()) continue;
    const auto p = times().find({type, cols, "threads"});
    std::printf("%-6s %6ld %14.3f %12.3f %12.3f %8.3f", type.c_str(), static_cast<long>(cols), t * 1e3, l->second * 1e3,
                g->second * 1e3, t / std::max(l->second, g->second));
    if (p != times().end()) std::printf(" %11.3f", t / p->second);
    std::printf("\n");
  }
  return 0;
}
