// Before you have a TPU: how long would these collectives take on one?
// refx::predict runs one call in a model of a TPU generation (docs/targets.md,
// "Predicted time") and prints, per device, the predicted time, the time spent
// waiting and the communication left exposed; it writes the predicted
// timeline (Chrome-trace JSON, modelled microseconds) for ui.perfetto.dev.
//
//   1. a bidirectional ring all-reduce of 256 KiB per device along the first
//      axis of a v5p 4x4x4 cube and of a v5e 16x16 pod (256 devices);
//   2. the collective matmul (all_gather(A) @ b, the gather overlapped with
//      the products) on a ring of 4 v5p chips, for widths of b from 256 to
//      8192: with a narrow b the products are short and the communication
//      shows; with a wide one they hide it, in the order the program is
//      written (compiled without the schedule pass; with it, see below).
//
// Usage: predict_collectives [timeline directory]   (default: the current one)

#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;

/// The slowest device's figures, in microseconds.
void summary(const char* what, const Prediction& p, double host_seconds) {
  double waiting = 0, exposed = 0, busy = 0;
  for (const DevicePrediction& d : p.devices) {
    waiting = std::max(waiting, d.waiting_seconds);
    exposed = std::max(exposed, d.exposed_communication_seconds);
    busy = std::max(busy, d.busy_seconds);
  }
  std::printf("%-50s %-5s %-16s %9.2f us  busy %8.2f  waiting %8.2f  exposed comm %8.2f  (modelled in %.2f s)\n", what,
              p.target.c_str(), p.mesh.c_str(), p.seconds() * 1e6, busy * 1e6, waiting * 1e6, exposed * 1e6,
              host_seconds);
}

template <class F>
Prediction timed(F&& f, double& seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  Prediction p = f();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

Prediction all_reduce(const Mesh& mesh, const Target& t, double& host_seconds) {
  constexpr std::int64_t elements = 1 << 16;  // 256 KiB of f32 per device
  const Executable exe = collectives::all_reduce_program<float>(
      mesh, elements, {.direction = collectives::Direction::bidirectional, .algorithm = collectives::Algorithm::ring});
  Array x = Array::generate<float>(mesh.size(), Shape{elements},
                                   [](std::int32_t d, std::int64_t i) { return float((d + i) % 7); });
  Array out = Array::empty(mesh.size(), DType::f32, Shape{elements});
  Prediction p = timed([&] { return predict(exe, t, x, out); }, host_seconds);
  // The model ran the call: out holds what the threaded runtime computes.
  const Array expected = exe(x)[0];
  for (const std::int32_t d : {0, mesh.size() - 1})
    if (out.to_host<float>(d) != expected.to_host<float>(d))
      throw Error(fmt::format("predict_collectives: device {}'s predicted call computed another all-reduce", d));
  return p;
}

// `schedule`: compiled with refx's schedule pass (the default), which runs
// the ring's copy starts and the waits they depend on before the products:
// good for the threaded runtime, but on a chip it leaves the ring nothing to
// hide behind. Without it the model runs the program in the order written.
Prediction collective_matmul(std::int64_t cols, bool schedule, double& host_seconds) {
  constexpr std::int64_t m = 128, k = 256;
  using M = Ref<bf16, extents<dyn, dyn>, Vmem>;
  using CM = Ref<const bf16, extents<dyn, dyn>, Vmem>;
  const Executable exe = kernel([](CM a, CM b, M out) { collectives::collective_matmul(a, b, out, "x"); })
                             .name("collective_matmul")
                             .passes({.schedule = schedule})
                             .compile(Mesh{{"x", 4}}, {Shape{m, k}, Shape{k, cols}, Shape{4 * m, cols}});
  Array a = Array::generate<bf16>(4, Shape{m, k}, [](std::int32_t d, std::int64_t i) { return float((d + i) % 3); });
  Array b = Array::generate<bf16>(4, Shape{k, cols}, [](std::int32_t, std::int64_t i) { return float(i % 2); });
  Array out = Array::empty(4, DType::bf16, Shape{4 * m, cols});
  return timed([&] { return predict(exe, targets::v5p(), a, b, out); }, host_seconds);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  double host = 0;

  const Prediction cube = all_reduce(Mesh{{"x", 4}, {"y", 4}, {"z", 4}}, targets::v5p(), host);
  summary("bidirectional all-reduce, 256 KiB, along x", cube, host);
  const Prediction pod = all_reduce(Mesh{{"x", 16}, {"y", 16}}, targets::v5e(), host);
  summary("bidirectional all-reduce, 256 KiB, along x", pod, host);
  cube.write_timeline(dir + "/predicted_all_reduce_v5p.json");
  pod.write_timeline(dir + "/predicted_all_reduce_v5e.json");

  // Each step sends a 64 KiB block of a over one link (0.73 us at v5p's
  // working 90 GB/s + 1 us of latency) while multiplying the block it has
  // (2 * 128 * 256 * cols operations at 459 TFLOP/s): in program order the
  // product hides the copy from about 12,100 columns on.
  for (const std::int64_t cols : {256, 1024, 2048, 4096, 8192})
    for (const bool schedule : {false, true}) {
      const Prediction p = collective_matmul(cols, schedule, host);
      summary(fmt::format("collective matmul 128x256 @ 256x{}{}", cols, schedule ? ", scheduled" : "").c_str(), p,
              host);
      if (!schedule) p.write_timeline(fmt::format("{}/predicted_collective_matmul_{}.json", dir, cols));
    }

  // The whole API on one call: the 4-chip all-reduce on v5p, printed in full.
  const Mesh ring{{"x", 4}};
  const Executable exe = collectives::all_reduce_program<float>(ring, 1 << 16);
  Array x = Array::generate<float>(4, Shape{1 << 16}, [](std::int32_t d, std::int64_t i) { return float(d + i % 3); });
  Array out = Array::empty(4, DType::f32, Shape{1 << 16});
  // [snippet:predict-call]
  const Prediction p = predict(exe, targets::v5p(), x, out);   // one Array per parameter; out is written
  std::fputs(p.to_string().c_str(), stdout);                   // per device: total, busy, waiting, exposed comm
  p.write_timeline(dir + "/predicted_all_reduce_ring4.json");  // modelled microseconds, for ui.perfetto.dev
  // [/snippet]
  std::printf("predicted timelines written to %s/predicted_*.json (modelled microseconds)\n", dir.c_str());
}
