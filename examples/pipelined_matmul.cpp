// The canonical Pallas TPU matmul (docs/pallas/tpu/matmul.md): C = A @ B with
// bf16 A and B in Hbm, a 3-D grid (i, j, k), an f32 accumulator in Vmem
// scratch that is zeroed when k starts and rounded into C's bf16 block when k
// ends. C's block index (i, j) does not change along k, so C is written back
// once per (i, j), after its last k step; A's and B's blocks are fetched
// while the previous step computes.
//
// Small-integer inputs keep every product and sum exact in f32, so C must
// equal the exact product rounded to bf16 once. Prints one check line, the
// copy counts and GFLOP/s; exits non-zero on a wrong element.

#include <chrono>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include <refx/refx.hpp>

namespace {
using namespace refx;

constexpr std::int64_t kM = 512, kK = 512, kN = 512;
constexpr std::int64_t kBm = 128, kBk = 128, kBn = 128;
using I = std::int64_t;

// pallas_call with scratch_shapes: the kernel is the pipeline, the f32
// accumulator a scratch operand after the BlockSpecs.
const auto matmul = pipeline_kernel<HbmRef<const bf16, kM, kK>, HbmRef<const bf16, kK, kN>, HbmRef<bf16, kM, kN>>(
    grid(kM / kBm, kN / kBn, kK / kBk),
    [](VmemRef<const bf16, kBm, kBk> ab, VmemRef<const bf16, kBk, kBn> bb, VmemRef<bf16, kBm, kBn> cb,
       VmemRef<float, kBm, kBn> acc) {
      if (program_id(2) == 0) acc.store(0.0f);
      acc += dot<float>(ab.load(), bb.load());  // exact bf16 products, f32 sums
      if (program_id(2) == num_programs(2) - 1) cb.store(cast<bf16>(acc.load()));
    },
    block<kBm, kBk>([](I i, I, I k) {
      return std::array{i, k};
    }),
    block<kBk, kBn>([](I, I j, I k) {
      return std::array{k, j};
    }),
    block<kBm, kBn>([](I i, I j, I) {
      return std::array{i, j};
    }),
    scratch<VmemRef<float, kBm, kBn>>());

bf16 a_value(int, std::int64_t e) { return bf16(static_cast<float>((e * 7) % 9 - 4)); }
bf16 b_value(int, std::int64_t e) { return bf16(static_cast<float>((e * 5) % 7 - 3)); }

}  // namespace

int main() {
  const Executable exe = kernel(matmul).name("pipelined_matmul").compile(Mesh{{"x", 1}});
  const Array a = Array::generate<bf16>(1, Shape{kM, kK}, a_value),
              b = Array::generate<bf16>(1, Shape{kK, kN}, b_value);
  const std::vector<bf16> c = exe(a, b)[0].to_host<bf16>(0);
  const PipelineReport& report = exe.pipeline_report();  // what the trace of the pipeline did

  int wrong = 0;
  std::vector<float> bt(static_cast<std::size_t>(kK * kN));
  for (std::int64_t e = 0; e < kK * kN; ++e) bt[static_cast<std::size_t>(e)] = float(b_value(0, e));
  for (std::int64_t i = 0; i < kM; ++i)
    for (std::int64_t j = 0; j < kN; ++j) {
      double exact = 0;
      for (std::int64_t p = 0; p < kK; ++p)
        exact += double(float(a_value(0, i * kK + p))) * bt[static_cast<std::size_t>(p * kN + j)];
      const bf16 want = bf16(static_cast<float>(exact));
      if (!(c[static_cast<std::size_t>(i * kN + j)] == want) && wrong++ < 5)
        fmt::print("C[{}, {}] = {}, want {}\n", i, j, float(c[static_cast<std::size_t>(i * kN + j)]), float(want));
    }

  constexpr int reps = 5;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) exe(a, b)[0].block_until_ready();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;

  fmt::print("pipelined_matmul: {}x{}x{} bf16, grid ({}, {}, {}), {} steps: {}\n", kM, kK, kN, kM / kBm, kN / kBn,
             kK / kBk, report.steps, wrong == 0 ? "ok" : fmt::format("WRONG ({} elements)", wrong));
  fmt::print(
      "pipelined_matmul: {} A-block and {} B-block fetches, {} C write-backs; {:.2f} GFLOP/s ({:.2f} ms per call)\n",
      report.copies[0], report.copies[1], report.copies[2], 2.0 * kM * kN * kK / secs / 1e9, secs * 1e3);
  return wrong == 0 && report.copies[2] == (kM / kBm) * (kN / kBn) ? 0 : 1;
}
