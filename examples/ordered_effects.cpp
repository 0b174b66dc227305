// Ordered effects across devices: the sequencing-effects scenario.
//
// Two programs on a two-device mesh: f logs from device 0 and is slow (its
// callback sleeps), g logs from device 1 and is fast. They are dispatched
// alternately, f, g, f, g, ..., and every call returns at once. Because both
// use ordered io_callbacks, the calling thread's runtime token for that kind
// passes from each program to the next -- from device 0 to device 1 and back
// -- so the log keeps the dispatch order although g would otherwise finish
// first. (JAX refuses ordered effects on more than one device; refx orders
// them by (program, sequence, device).)
//
// Then one program prints from both devices with ordered debug_print inside
// a fori_loop: the output is in iteration order, device 0 before device 1.
//
// See docs/effects.md, which quotes the regions between [snippet:...] and
// [/snippet] verbatim (checked by docs.Docs.FragmentsQuoteACompiledSourceVerbatim).

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <refx/refx.hpp>

using namespace refx;

int main() {
  const Mesh mesh{{"x", 2}};
  std::mutex mu;
  std::vector<std::string> log;

  // [snippet:f-and-g]
  // f: an ordered callback on device 0 that takes a few milliseconds.
  auto f = kernel([&](VmemRef<const std::int32_t, 1> step) {
             when(axis_index("x") == 0, [&] {
               io_callback(ordered, [&](std::int32_t k) {
                 std::this_thread::sleep_for(std::chrono::milliseconds(4));
                 std::lock_guard lock(mu);
                 log.push_back(fmt::format("f{}", k));
               }, step.at(0).load());
             });
           })
               .name("f")
               .compile(mesh);

  // g: an ordered callback on device 1, fast.
  auto g = kernel([&](VmemRef<const std::int32_t, 1> step) {
             when(axis_index("x") == 1, [&] {
               io_callback(ordered, [&](std::int32_t k) {
                 std::lock_guard lock(mu);
                 log.push_back(fmt::format("g{}", k));
               }, step.at(0).load());
             });
           })
               .name("g")
               .compile(mesh);
  // [/snippet]

  std::printf("f: %s\n", f.effects().describe().c_str());

  constexpr int kSteps = 8;
  const auto t0 = std::chrono::steady_clock::now();
  // [snippet:dispatch]
  for (int k = 0; k < kSteps; ++k) {
    const Array step = Array::generate<std::int32_t>(2, Shape{1}, [&](int, std::int64_t) { return k; });
    f(step);  // returns at once: no outputs, only effects
    g(step);
  }
  // [/snippet]
  const double dispatch_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  effects_barrier();  // waits for every effect this thread dispatched
  const double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("dispatched %d programs in %.2f ms; their effects took %.2f ms\n", 2 * kSteps, dispatch_ms, total_ms);

  // Ordered prints from both devices in a loop: (iteration, device) order.
  // [snippet:progress]
  auto progress = kernel([](VmemRef<const std::int32_t, 1>) {
                    auto me = axis_index("x");
                    fori_loop(0, 3, [&](Scalar<std::int32_t> i) {
                      debug_print(ordered, "  iteration {} on device {}", i, me);
                    });
                  })
                      .name("progress")
                      .compile(mesh);
  progress(Array::generate<std::int32_t>(2, Shape{1}, [](int, std::int64_t) { return 0; }));
  effects_barrier();
  // [/snippet]

  std::printf("log:");
  for (const auto& e : log) std::printf(" %s", e.c_str());
  std::printf("\n");
  std::vector<std::string> expected;
  for (int k = 0; k < kSteps; ++k) {
    expected.push_back(fmt::format("f{}", k));
    expected.push_back(fmt::format("g{}", k));
  }
  if (log != expected) {
    std::printf("ordered_effects: FAILED (the log is out of order)\n");
    return 1;
  }
  std::printf("ordered_effects: ok\n");
  return 0;
}
