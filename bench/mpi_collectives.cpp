// refx collectives over the MPI transport next to MPI's own, in the same run:
//
//   mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader
//          -np 4 build/release/bench/bench_mpi_collectives [--sizes 64K,1M,16M] [--reps 9]
//          [--ops all_reduce,all_gather]
//
// One device per rank. all_reduce: refx's all_reduce_program (out of place,
// into one output Array that every call reuses, as MPI its recvbuf) vs
// MPI_Allreduce (sum, float32); all_gather: all_gather_program vs
// MPI_Allgather; sizes as in ../shared/peers (all_reduce: the buffer;
// all_gather: the gathered result). A sample is K back-to-back operations
// between two barriers, timed on every rank, the slowest rank's time counts;
// the median of --reps samples is reported. busbw = size * 2(N-1)/N / t
// (all_reduce), size * (N-1)/N / t (all_gather), as nccl-tests.
// Rank 0 prints a markdown table with the ratio refx / MPI.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>  // Runtime::global() (refx::compiled leaves it to the TU)

namespace {

using namespace refx;
using Clock = std::chrono::steady_clock;

std::vector<std::int64_t> parse_sizes(const std::string& s) {
  std::vector<std::int64_t> out;
  std::size_t at = 0;
  while (at < s.size()) {
    std::size_t end = s.find(',', at);
    if (end == std::string::npos) end = s.size();
    std::string t = s.substr(at, end - at);
    std::int64_t mul = 1;
    if (t.back() == 'K') mul = 1 << 10, t.pop_back();
    else if (t.back() == 'M') mul = 1 << 20, t.pop_back();
    out.push_back(std::atoll(t.c_str()) * mul);
    at = end + 1;
  }
  return out;
}

/// Median over `reps` samples of the slowest rank's time for one op.
template <class F>
double time_op(F&& op, int reps, std::int64_t bytes) {
  const int k = std::clamp<int>(static_cast<int>((std::int64_t{64} << 20) / std::max<std::int64_t>(bytes, 1)), 2, 200);
  op();  // warm up (and allocate)
  op();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = Clock::now();
    for (int i = 0; i < k; ++i) op();
    double mine = std::chrono::duration<double>(Clock::now() - t0).count() / k, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t.push_back(slowest);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// time_op of an out-of-place refx program whose output is allocated by the
/// first call and then reused, as MPI reuses its recvbuf.
double time_out_of_place(const Executable& exe, const Array& x, int reps, std::int64_t bytes) {
  const Array out = exe(x)[0];
  return time_op(
      [&] {
        exe.call_in_place({x, out});
        out.block_until_ready();
      },
      reps, bytes);
}

std::string human(std::int64_t b) {
  return b >= (1 << 20) ? fmt::format("{} MiB", b >> 20) : fmt::format("{} KiB", b >> 10);
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes_arg = "64K,1M,16M";
  int reps = 9;
  std::string ops = "all_reduce,all_gather";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--sizes") sizes_arg = argv[i + 1];
    if (std::string(argv[i]) == "--reps") reps = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--ops") ops = argv[i + 1];
  }
  Runtime& rt = Runtime::global();  // initializes MPI (MPI_THREAD_MULTIPLE) under mpirun
  const int n = rt.ranks(), me = rt.rank();
  if (n < 2) {
    std::fprintf(stderr, "bench_mpi_collectives: run under mpirun with 2 or more ranks\n");
    return 2;
  }
  const Mesh mesh{{"x", n}};
  if (me == 0) {
    std::printf("| op | N | size | MPI time | refx time | MPI busbw GB/s | refx busbw GB/s | refx / MPI |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
  }
  for (const std::int64_t size : parse_sizes(sizes_arg)) {
    const std::int64_t count = size / 4;
    if (count % n != 0) continue;
    if (ops.find("all_reduce") != std::string::npos) {
      std::vector<float> send(static_cast<std::size_t>(count), 1.0f + me), recv(send.size());
      const double t_mpi = time_op(
          [&] { MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); },
          reps, size);
      auto exe = collectives::all_reduce_program<float>(mesh, count);
      Array x = Array::generate<float>(n, Shape{count}, [](int d, std::int64_t) { return 1.0f + d; });
      const double t_refx = time_out_of_place(exe, x, reps, size);
      const double f = 2.0 * (n - 1) / n * static_cast<double>(size) / 1e9;
      if (me == 0)
        std::printf("| all_reduce | %d | %s | %.1f us | %.1f us | %.2f | %.2f | %.2f |\n", n, human(size).c_str(),
                    t_mpi * 1e6, t_refx * 1e6, f / t_mpi, f / t_refx, t_mpi / t_refx);
    }
    if (ops.find("all_gather") != std::string::npos) {  // `size` is the gathered result
      const std::int64_t block = count / n;
      std::vector<float> send(static_cast<std::size_t>(block), 1.0f + me), recv(static_cast<std::size_t>(count));
      const double t_mpi = time_op(
          [&] {
            MPI_Allgather(send.data(), static_cast<int>(block), MPI_FLOAT, recv.data(), static_cast<int>(block),
                          MPI_FLOAT, MPI_COMM_WORLD);
          },
          reps, size);
      auto exe = collectives::all_gather_program<float>(mesh, block);
      Array x = Array::generate<float>(n, Shape{block}, [](int d, std::int64_t) { return 1.0f + d; });
      const double t_refx = time_out_of_place(exe, x, reps, size);
      const double f = 1.0 * (n - 1) / n * static_cast<double>(size) / 1e9;
      if (me == 0)
        std::printf("| all_gather | %d | %s | %.1f us | %.1f us | %.2f | %.2f | %.2f |\n", n, human(size).c_str(),
                    t_mpi * 1e6, t_refx * 1e6, f / t_mpi, f / t_refx, t_mpi / t_refx);
    }
    std::fflush(stdout);
  }
  return 0;
}
