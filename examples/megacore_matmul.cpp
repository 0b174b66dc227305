// A matmul on a megacore device: the Pallas TPU matmul of
// examples/pipelined_matmul.cpp, compiled for a device with two cores
// (Mesh::with_cores(2)). Its grid's dimensions are marked: (i, j) parallel,
// k arbitrary (the reduction into one accumulator). Each core runs its own
// copy of the kernel: it pipelines the (i, j) blocks of its half of the grid,
// with its own Vmem ring and accumulator, reading A and B from the device's
// shared Hbm and writing its own blocks of C there. The same kernel on one
// core runs the whole grid.
//
// Both results must equal the exact product rounded to f32 (small-integer
// inputs keep every sum exact). Prints one check line and the time of each
// form; exits non-zero on a wrong element. The timed comparison is
// bench/megacore.cpp.

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

// [snippet:megacore-matmul]
const auto matmul = pipeline_kernel<HbmRef<const float, kM, kK>, HbmRef<const float, kK, kN>, HbmRef<float, kM, kN>>(
    grid(kM / kBm, kN / kBn, kK / kBk).dimension_semantics(parallel, parallel, arbitrary),
    [](VmemRef<const float, kBm, kBk> ab, VmemRef<const float, kBk, kBn> bb, VmemRef<float, kBm, kBn> cb,
       VmemRef<float, kBm, kBn> acc) {
      if (program_id(2) == 0) acc.store(0.0f);
      acc += dot<float>(ab.load(), bb.load());
      if (program_id(2) == num_programs(2) - 1) cb.store(acc.load());
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

// One device with two cores: each core runs the (i, j) blocks of its half.
const Mesh megacore = Mesh{{"x", 1}}.with_cores(2);
// [/snippet]

float a_value(int, std::int64_t e) { return static_cast<float>((e * 7) % 9 - 4); }
float b_value(int, std::int64_t e) { return static_cast<float>((e * 5) % 7 - 3); }

int count_wrong(const std::vector<float>& c, const char* what) {
  int wrong = 0;
  for (std::int64_t i = 0; i < kM; ++i)
    for (std::int64_t j = 0; j < kN; ++j) {
      double exact = 0;
      for (std::int64_t p = 0; p < kK; ++p) exact += double(a_value(0, i * kK + p)) * b_value(0, p * kN + j);
      const float got = c[static_cast<std::size_t>(i * kN + j)];
      if (got != static_cast<float>(exact) && wrong++ < 5)
        fmt::print("{}: C[{}, {}] = {}, want {}\n", what, i, j, got, exact);
    }
  return wrong;
}

double seconds_per_call(const Executable& exe, const Array& a, const Array& b) {
  constexpr int reps = 5;
  exe(a, b)[0].block_until_ready();  // warm: contexts and scratch allocated
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) exe(a, b)[0].block_until_ready();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

}  // namespace

int main() {
  const Executable two = kernel(matmul).name("megacore_matmul").compile(megacore);
  const Executable one = kernel(matmul).name("one_core_matmul").compile(Mesh{{"x", 1}});
  const Array a = Array::generate<float>(1, Shape{kM, kK}, a_value),
              b = Array::generate<float>(1, Shape{kK, kN}, b_value);
  const int wrong =
      count_wrong(two(a, b)[0].to_host<float>(0), "2 cores") + count_wrong(one(a, b)[0].to_host<float>(0), "1 core");

  // One report per core, in core order: each ran half of the (i, j) blocks.
  const auto& reports = two.pipeline_reports();
  const bool split = reports.size() == 2 && reports[0].steps == reports[1].steps &&
                     reports[0].steps + reports[1].steps == one.pipeline_report().steps;
  const double t2 = seconds_per_call(two, a, b), t1 = seconds_per_call(one, a, b);
  fmt::print(
      "megacore_matmul: {}x{}x{} f32, grid ({}, {}, {}) parallel, parallel, arbitrary: {} steps on core 0, {} on "
      "core 1: {}\n",
      kM, kK, kN, kM / kBm, kN / kBn, kK / kBk, reports.empty() ? 0 : reports[0].steps,
      reports.size() < 2 ? 0 : reports[1].steps,
      wrong == 0 && split ? "ok" : fmt::format("WRONG ({} elements, split {})", wrong, split));
  fmt::print("megacore_matmul: {:.2f} ms per call on 2 cores, {:.2f} ms on 1 core ({:.2f}x)\n", t2 * 1e3, t1 * 1e3,
             t1 / t2);
  return wrong == 0 && split ? 0 : 1;
}
