// jax-ml/jax's all_gather kernel (examples/jax_all_gather.hpp) on 4 and 8
// devices: every device's output holds every shard, checked element by
// element against the inputs, in the default runtime and with the race
// detector and lazy copies on. Prints the time per call and the bus
// bandwidth; exits non-zero on a wrong element.

#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <refx/runtime/runtime.hpp>

#include "jax_all_gather.hpp"

namespace {
using namespace refx;
using I = std::int64_t;
constexpr I kShard = 256, kCols = 128;  // 128 KiB of f32 per device

float value(int d, I e) { return static_cast<float>(d * 1000 + e % 991); }

template <I kDevices>
bool run(const RuntimeOptions& options, const char* mode) {
  Runtime rt(options);
  const Mesh mesh{{"x", static_cast<int>(kDevices)}};
  const Executable exe = jax_all_gather::all_gather<float, kDevices, kShard, kCols>(mesh, rt);
  const Array x = Array::generate<float>(static_cast<int>(kDevices), Shape{kShard, kCols}, value, rt);
  const Array o = exe(x)[0];
  bool ok = true;
  for (int d = 0; d < kDevices && ok; ++d) {
    const std::vector<float> got = o.to_host<float>(d);
    for (int e = 0; e < kDevices && ok; ++e)
      for (I i = 0; i < kShard * kCols && ok; ++i)
        ok = got[static_cast<std::size_t>(e * kShard * kCols + i)] == value(e, i);
  }
  constexpr int reps = 20;
  const auto t0 = std::chrono::steady_clock::now();
  Array last;
  for (int r = 0; r < reps; ++r) last = exe(x)[0];
  last.block_until_ready();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  const double busbw = static_cast<double>((kDevices - 1) * kShard * kCols * sizeof(float)) / s / 1e9;
  fmt::print("all_gather  N={}  {:<13} {}  {:8.1f} us/call  busbw {:6.2f} GB/s\n", kDevices, mode, ok ? "ok" : "WRONG",
             s * 1e6, busbw);
  return ok;
}
}  // namespace

int main() {
  bool ok = true;
  for (const auto& [options, mode] : {std::pair{RuntimeOptions{}, "default"},
                                      std::pair{RuntimeOptions{.detect_races = true}, "detect_races"},
                                      std::pair{RuntimeOptions{.lazy_copies = true}, "lazy_copies"}}) {
    ok = run<4>(options, mode) && ok;
    ok = run<8>(options, mode) && ok;
  }
  return ok ? 0 : 1;
}
