// Uni- versus bidirectional ring all-reduce.
//
// A unidirectional ring uses one link of each device: everything travels
// right. The bidirectional ring splits every chunk in two halves; the first
// halves travel right and the second halves travel left, each on its own
// semaphores and capacity handshake, so each step's two copies are in flight
// at once and every device's links in both directions are busy. The bytes
// are the same; the number of steps is the same; each copy is half as large.
//
// All devices must end with bitwise the same result, even for float sums
// whose rounding depends on the order: each chunk is reduced once, by its
// owner, and the finished chunk is copied to everyone.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;
using collectives::Algorithm;
using collectives::Direction;

constexpr int kN = 8;
constexpr std::int64_t kElems = 1 << 17;  // floats per device: 512 KiB
constexpr int kReps = 20;

// Not exactly representable: the order of the sum changes its rounding.
float input(int d, std::int64_t i) { return 0.1f * static_cast<float>(d + 1) + 0.01f * static_cast<float>(i % 101); }

/// Close to the host's sum, and bitwise identical on every device.
bool check(const Array& x) {
  const std::vector<float> first = x.to_host<float>(0);
  for (int d = 0; d < kN; ++d) {
    const std::vector<float> got = x.to_host<float>(d);
    if (std::memcmp(got.data(), first.data(), got.size() * sizeof(float)) != 0) return false;
    for (std::int64_t i = 0; i < kElems; ++i) {
      double want = 0;
      for (int e = 0; e < kN; ++e) want += input(e, i);
      if (std::abs(got[static_cast<std::size_t>(i)] - want) > 1e-5 * kN * std::abs(want)) return false;
    }
  }
  return true;
}

bool run(Direction dir) {
  const Mesh mesh{{"x", kN}};
  // Algorithm::ring: automatic would choose the direct algorithm for N > 2,
  // which has no direction.
  const Executable exe = kernel([dir](HbmRef<float, kElems> x) {
                           collectives::all_reduce(x, "x", ReduceOp::sum, dir, Algorithm::ring);
                         }).compile(mesh);
  Array x = Array::generate<float>(kN, Shape{kElems}, input);
  exe.call_in_place({x});
  const bool ok = check(x);

  Array y = Array::generate<float>(kN, Shape{kElems}, input);
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < kReps; ++r) exe.call_in_place({y});
  y.block_until_ready();
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kReps;
  const double busbw = 2.0 * (kN - 1) / kN * static_cast<double>(kElems * sizeof(float)) / t / 1e9;
  fmt::print("{:<15} all_reduce: {}  N={} x={} KiB  {:8.1f} us/op  busbw {:6.2f} GB/s\n",
             dir == Direction::bidirectional ? "bidirectional" : "unidirectional", ok ? "ok" : "WRONG", kN,
             kElems * sizeof(float) / 1024, t * 1e6, busbw);
  return ok;
}
}  // namespace

int main() {
  const bool ok = run(Direction::unidirectional) & run(Direction::bidirectional);
  return ok ? 0 : 1;
}
