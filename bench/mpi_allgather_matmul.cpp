// The peer of refx's collective matmul (bench/collective_matmul.cpp): what a
// C++ user writes without refx. Each rank holds a row block a (m, k) of A and
// its own b (k, n); it gathers A with MPI_Allgather, then multiplies with
// Eigen's single-threaded GEMM: out (N m, n) = A @ b. No overlap.
//
//   mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 --mca pml ob1 --mca btl self,vader
//          build/release/bench/bench_mpi_allgather_matmul [--m 256] [--k 1024] [--n 1024] [--reps 7]
//
// (the flags of ../shared/peers/scripts/run_mpi.sh). A sample is one
// all-gather + GEMM between two barriers; the slowest rank's time counts;
// rank 0 prints the median of --reps samples as
//   mpi_allgather_matmul m=.. k=.. n=.. ranks=.. median_ms=.. allgather_ms=.. gemm_ms=..
// (bench/run_collective_matmul.sh reads that line).

#include <mpi.h>

#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double slowest(double t) {
  double worst = 0;
  MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Eigen::setNbThreads(1);
  long m = 256, k = 1024, n = 1024;
  int reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long v = std::atol(argv[i + 1]);
    if (flag == "--m") m = v;
    else if (flag == "--k") k = v;
    else if (flag == "--n") n = v;
    else if (flag == "--reps") reps = static_cast<int>(v);
    else {
      if (rank == 0) std::fprintf(stderr, "mpi_allgather_matmul: unknown flag %s\n", flag.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (m <= 0 || k <= 0 || n <= 0 || reps <= 0) {
    if (rank == 0) std::fprintf(stderr, "mpi_allgather_matmul: --m, --k, --n and --reps must be positive\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Matrix a(m, k), b(k, n), all(ranks * m, k), out(ranks * m, n);
  for (long i = 0; i < a.size(); ++i) a.data()[i] = static_cast<float>((rank * 7 + i) % 5 - 2);
  for (long i = 0; i < b.size(); ++i) b.data()[i] = static_cast<float>((rank + 3 * i) % 7 - 3);

  std::vector<double> total, gather, gemm;
  for (int r = 0; r < reps + 1; ++r) {  // the first sample warms up and is dropped
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = Clock::now();
    MPI_Allgather(a.data(), static_cast<int>(m * k), MPI_FLOAT, all.data(), static_cast<int>(m * k), MPI_FLOAT,
                  MPI_COMM_WORLD);
    const double tg = seconds_since(t0);
    const auto t1 = Clock::now();
    out.noalias() = all * b;
    const double tm = seconds_since(t1), tt = seconds_since(t0);
    const double wt = slowest(tt), wg = slowest(tg), wm = slowest(tm);
    if (r > 0) total.push_back(wt), gather.push_back(wg), gemm.push_back(wm);
  }
  // A checksum keeps the GEMM from being optimised away and catches a wrong gather.
  double sum = 0;
  for (long i = 0; i < out.size(); ++i) sum += out.data()[i];
  if (rank == 0)
    std::printf(
        "mpi_allgather_matmul m=%ld k=%ld n=%ld ranks=%d median_ms=%.3f allgather_ms=%.3f gemm_ms=%.3f checksum=%g\n",
        m, k, n, ranks, median(total) * 1e3, median(gather) * 1e3, median(gemm) * 1e3, sum);
  MPI_Finalize();
  return 0;
}
