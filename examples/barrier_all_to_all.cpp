// All-to-all barrier (pallas-semantics b.7 and test 9 of section d): every
// device signals the kernel's barrier semaphore on every device, itself
// included, then waits for N signals -- after that, every device has entered
// the kernel. Then a sync_copy of the input to the output (identity).
//
// The kernel runs 100 times back to back on one barrier semaphore
// (collective id 0): each call must leave it at 0 for the next one.
// Prints one check line; exits non-zero on a wrong result or an error.

#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>  // Runtime::global()

namespace {
using namespace refx;

constexpr int kDevices = 8;
constexpr std::int64_t kBlock = 512;

auto all_to_all_barrier_then_identity() {
  return kernel([](HbmRef<const std::int32_t, kBlock> x, HbmRef<std::int32_t, kBlock> y) {
           auto barrier = get_barrier_semaphore();
           for (int d = 0; d < kDevices; ++d) semaphore_signal(barrier, 1, d);  // LOGICAL ids 0..N-1
           semaphore_wait(barrier, kDevices);
           sync_copy(x, y);
         })
      .name("barrier_all_to_all")
      .collective_id(0)
      .compile(Mesh{{"x", kDevices}});
}

}  // namespace

int main() {
  const Executable exe = all_to_all_barrier_then_identity();
  constexpr int calls = 100;
  const LaunchStats before = Runtime::global().totals();

  std::vector<Array> outs;
  outs.reserve(calls);
  for (int c = 0; c < calls; ++c) {
    const Array x = Array::generate<std::int32_t>(kDevices, Shape{kBlock}, [c](int d, std::int64_t i) {
      return static_cast<std::int32_t>(c * 100000 + d * 1000 + i);
    });
    outs.push_back(exe(x)[0]);  // dispatched without waiting for the previous call
  }

  int wrong = 0;
  try {
    for (int c = 0; c < calls; ++c)
      for (int d = 0; d < kDevices; ++d) {
        const std::vector<std::int32_t> got = outs[static_cast<std::size_t>(c)].to_host<std::int32_t>(d);
        for (std::size_t i = 0; i < got.size(); ++i)
          if (got[i] != static_cast<std::int32_t>(c * 100000 + d * 1000 + static_cast<std::int64_t>(i))) ++wrong;
      }
  } catch (const refx::Error& e) {
    fmt::print("barrier_all_to_all: FAILED: {}\n", e.what());
    return 1;
  }
  const LaunchStats after = Runtime::global().totals();
  fmt::print("barrier_all_to_all: {} devices, {} calls back to back: {} ({} copies, {} parks)\n", kDevices, calls,
             wrong == 0 ? "ok" : fmt::format("WRONG ({} elements)", wrong), after.copies - before.copies,
             after.parks - before.parks);
  return wrong == 0 ? 0 : 1;
}
